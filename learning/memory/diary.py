"""The diary store: ``write`` (both writers), ``recall`` (hybrid), ``recent`` (recency half).

A note is stored verbatim, embedded before its insert (``prepare``, outside any write transaction)
under a two-second budget, and stored without a vector when one cannot be had (``store``). Expired
short notes are excluded by the read's own predicate; the retention sweep deletes them.

Recall is hybrid (``core.hybrid``): the query's vector ranking fused by rank with its content words'
full-text ranking over the seat's live notes.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, fields
from datetime import datetime, timedelta

from django.db import DatabaseError, connection, transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from core import hybrid
from core.providers.embeddings import embed_one
from core.providers.embeddings.base import DIARY_EMBED_BUDGET
from core.scrub import scrub_secrets
from core.words import search_words
from crewlet.models import Seat
from learning import limits
from learning.models import DiaryEntry

log = logging.getLogger("learning.memory.diary")

MEMORY_VECTOR_LIMIT = 50  # memoryVectorLimit
MEMORY_RECENCY_LIMIT = 50  # memoryRecencyLimit
RECALL_MAX_DISTANCE = 0.9  # the relevance floor of the vector ranking (a row past it is found by words or not at all)
CORPUS = hybrid.Corpus(table="agent_diary")


def live(seat: Seat, now: datetime | None = None) -> QuerySet[DiaryEntry]:
    """The seat's unexpired notes (an expired short note never takes a slot)."""
    now = now or timezone.now()
    return DiaryEntry.objects.filter(seat=seat).filter(Q(ttl_until__isnull=True) | Q(ttl_until__gt=now))


def has_live(seat: Seat, now: datetime | None = None) -> bool:
    return live(seat, now).exists()


def write(
    *, seat: Seat, content: str, kind: str, ttl_days: int | None = None, source: str = "", turn_id: str = "", now=None
) -> DiaryEntry:
    """Store one note verbatim; refuse past the limit; embed within budget or store vectorless."""
    return store(prepare(seat=seat, content=content, kind=kind, ttl_days=ttl_days, source=source, turn_id=turn_id,
                         now=now))


def prepare(
    *, seat: Seat, content: str, kind: str, ttl_days: int | None = None, source: str = "", turn_id: str = "", now=None
) -> DiaryEntry:
    """Check and embed one note without touching the database (so no write lock is held while embedding)."""
    content = scrub_secrets(content)  # the one scrubber, before the note is embedded or stored
    limits.check_note(content)
    if kind not in (DiaryEntry.LONG, DiaryEntry.SHORT):
        raise limits.BadInput(f"kind must be {DiaryEntry.LONG!r} or {DiaryEntry.SHORT!r}, got {kind!r}")
    now = now or timezone.now()
    ttl_until = None
    if kind == DiaryEntry.SHORT:
        if not ttl_days or ttl_days <= 0:
            raise limits.BadInput("ttl_days: a diary_short note needs a TTL of at least one day")
        ttl_until = now + timedelta(days=ttl_days)
    result = embed_one(content, budget=DIARY_EMBED_BUDGET)
    entry = DiaryEntry(
        seat=seat, kind=kind, content=content, ttl_until=ttl_until, source=source, turn_id=turn_id, created_at=now
    )
    entry.set_vector(result.vector, result.model)
    return entry


def store(entry: DiaryEntry) -> DiaryEntry:
    """Insert a prepared note and hold the LONG cap; the new note itself is never the cap's victim
    (in a transaction of its own, or the caller's: a failure propagates to the caller's savepoint)."""
    with transaction.atomic(savepoint=False):
        entry.save()
        if entry.kind == DiaryEntry.LONG:
            enforce_long_cap(entry.seat, keep=entry.pk)
    return entry


def enforce_long_cap(seat: Seat, cap: int | None = None, *, keep: int | None = None) -> int:
    """Evict past the cap by use: least retrieved, then least recently retrieved, then oldest.

    ``keep`` (the note just written) is never a victim: the eviction chooses among the others.
    """
    cap = limits.MAX_LONG_NOTES_PER_SEAT if cap is None else cap
    qs = DiaryEntry.objects.filter(seat=seat, kind=DiaryEntry.LONG)
    excess = qs.count() - cap
    if excess <= 0:
        return 0
    others = qs.exclude(pk=keep) if keep is not None else qs
    victims = list(
        others.order_by("use_count", F("last_retrieved_at").asc(nulls_first=True), "created_at", "id").values_list(
            "id", flat=True
        )[:excess]
    )
    DiaryEntry.objects.filter(id__in=victims).delete()
    return len(victims)


def recall(*, seat: Seat, vector, model: str, query: str = "", limit: int = MEMORY_VECTOR_LIMIT, now=None) -> list[DiaryEntry]:
    """The hybrid top-K of the seat's live notes with a vector of the query's model: the vector's
    ranking fused with the words' of ``query`` (no query: the vector's alone)."""
    ids = recall_ids(seat=seat, vector=vector, model=model, query=query, limit=limit, now=now)
    rows = DiaryEntry.objects.defer("embedding").in_bulk(ids)
    return [rows[i] for i in ids if i in rows]


def _scope(seat: Seat, model: str, dim: int, now) -> tuple[str, list]:
    """The seat's live notes with a vector of the query's model and width."""
    return ("t.seat_id = %s AND (t.ttl_until IS NULL OR t.ttl_until > %s)"
            " AND t.embedding_model = %s AND t.embedding_dim = %s"), [seat.pk, now, model, dim]


def recall_ids(*, seat: Seat, vector, model: str, query: str = "", limit: int = MEMORY_VECTOR_LIMIT,
               now=None, ranked_words: list[tuple[int, float]] | None = None) -> list[int]:
    """``recall``'s note ids, best first, without reading the notes (``ranked_words``: ``by_words``'s ranking
    of the same query, model, width and ``now``, when the caller made it already)."""
    if not vector:
        return []
    scope, params = _scope(seat, model, len(vector), now or timezone.now())
    return [i for i, _score in hybrid.ranked(
        CORPUS, scope=scope, scope_params=params, vector=vector, model=model,
        words=search_words(query) if query.strip() else [], limit=limit, max_distance=RECALL_MAX_DISTANCE,
        ranked_words=ranked_words)]


def by_words(*, seat: Seat, model: str, dim: int, query: str, now,
             shortlist: int = hybrid.SHORTLIST) -> list[tuple[int, float]]:
    """The words half of ``recall_ids`` (``shortlist``: its limit, when more than ``core.hybrid.SHORTLIST``):
    it needs no vector, only the model and width the query's will have."""
    scope, params = _scope(seat, model, dim, now)
    return hybrid.by_words(CORPUS, scope=scope, scope_params=params,
                           words=search_words(query) if query.strip() else [], shortlist=shortlist)


def _newest(seat: Seat, now=None) -> QuerySet[DiaryEntry]:
    return live(seat, now).order_by("-created_at", "-id")


def recent(*, seat: Seat, limit: int = MEMORY_RECENCY_LIMIT, now=None) -> list[DiaryEntry]:
    """The seat's newest live notes, without their vectors (nobody reading them reads the vector)."""
    return list(_newest(seat, now).defer("embedding")[:limit])


def recent_texts(*, seat: Seat, limit: int = MEMORY_RECENCY_LIMIT, now=None) -> list[str]:
    """The same notes as ``recent``, their text only (no vectors decoded)."""
    return list(_newest(seat, now).values_list("content", flat=True)[:limit])


@dataclass(frozen=True, slots=True)
class PoolNote:
    """A note of the memory pool: what the relevance filter and the digest read of it
    (``personal_memory``, ``refresh_memory``). Plain values, not model instances: nothing here is
    saved, so building a model for each pool note would be spent on every turn start for nothing."""

    id: int
    kind: str
    content: str
    ttl_until: datetime | None
    created_at: datetime


POOL_FIELDS = tuple(f.name for f in fields(PoolNote))


def candidates(*, seat: Seat, vector, model: str, query: str = "", now=None,
               ranked_words: list[tuple[int, float]] | None = None) -> list[PoolNote]:
    """The hybrid pool: recall (50, by meaning and ``query``'s words) then recent (50), deduped by id."""
    now = now or timezone.now()
    ids = recall_ids(seat=seat, vector=vector, model=model, query=query, now=now, ranked_words=ranked_words)
    recalled = {row[0]: PoolNote(*row) for row in DiaryEntry.objects.filter(id__in=ids).values_list(*POOL_FIELDS)}
    newest = [PoolNote(*row) for row in _newest(seat, now).values_list(*POOL_FIELDS)[:MEMORY_RECENCY_LIMIT]
              if row[0] not in recalled]
    return [recalled[i] for i in ids if i in recalled] + newest


# one fixed statement (the ORM's UPDATE of the same rows cost more to compile than to run)
_MARK_USED_SQL = 'UPDATE "agent_diary" SET use_count = use_count + 1, last_retrieved_at = %s WHERE id IN ({ids})'


def _execute(sql: str, params: list) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def mark_used(entry_ids: list[int], *, now=None) -> None:
    """Count a use for each note the relevance filter SELECTED; best effort, under its own savepoint."""
    if not entry_ids:
        return
    sql = _MARK_USED_SQL.format(ids=", ".join(["%s"] * len(entry_ids)))
    params = [connection.ops.adapt_datetimefield_value(now or timezone.now()), *[int(i) for i in entry_ids]]
    try:
        with transaction.atomic():
            _execute(sql, params)
    except DatabaseError:
        log.warning("diary use stamp failed for %d note(s)", len(entry_ids), exc_info=True)


def sweep_expired(*, now=None, seat: Seat | None = None) -> int:
    """The retention sweep: physically delete expired diary_short notes."""
    qs = DiaryEntry.objects.filter(kind=DiaryEntry.SHORT, ttl_until__lte=now or timezone.now())
    if seat is not None:
        qs = qs.filter(seat=seat)
    deleted, _ = qs.delete()
    return deleted
