"""The embedding fill: once a minute, vectors for live notes, raw turns, transcript shards and
knowledge pages that have none of the current model and width (an embed that failed, or one of a
model or width the company has left). A compacted row is never embedded. Shards are filled so the
ladder's vetoes keep comparing after a model change (a shard is only compared with shards of its
own model) and a shard stored without a vector can climb; pages so the knowledge search keeps its
vector half. Pages belong to no seat: they are filled after every seat's rows.

A minute is one pass over every active seat, held to what the provider answers and to what it
sends, refused requests included: ``providers.embeddings.requests_per_minute`` (16) requests and
``bytes_per_minute`` (1,000,000) bytes. The fill is one singleton over the shared database, so the
company's whole budget is its own; and the budget belongs to the wall-clock minute, not to a run:
every sender (the tick, ``run_pass embed_fill``, ``backfill_embeddings``) charges the minute's one
ledger row (``fill_ledger``), so together they send one minute's budget. A request carries at most
the minute's bytes over its requests, so no row
takes more of the account's minute than any other: a row longer than that is sent a request at a
time across minutes (``memory_fill_input_continued``), its pieces' vectors kept in
``embed_pieces`` and pooled into one vector of the whole text when the last is in.

- a rate limit, a timeout, a server error, a refused key or an unserved model ends the minute
  for every seat; the next minute starts at that seat and sends that request again;
- a refused batch is split in halves until the note it refuses is alone; that note is held back
  an hour (``embed_held_until``) and marked (``embed_pieces = {"alone": true}``), then offered
  again alone, never with its neighbours, until it is accepted; a refused piece of a long row holds
  the row with the pieces before it kept, so the retry resumes at that piece;
- a vector with no direction costs only its row, held an hour (``memory_fill_vector_unusable``);
- a refusal that is the minute's first answer is judged by one plain word sent alone: refused
  too, it is the configuration's (``memory_fill_configuration_refused``; nothing is sent for an
  hour, or until providers.embeddings' model, width, limits or endpoint change, which also
  releases every held row and clears the "alone" marks); accepted, it was the notes', which are isolated as above;
- a minute that runs out starts the next at the seat it ran out at.

The pause, the cursor and the provider fingerprint live in the ``learning.embed_fill.state``
duty row's ``last_result`` (no table of its own).
"""

from __future__ import annotations

import hashlib
import logging
from datetime import datetime, timedelta

from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from core import events, vectors
from core.providers.embeddings.base import get_embedder, pieces_of
from core.providers.errors import ProviderError
from crewlet import config
from crewlet.models import Seat
from knowledge.models import Page
from knowledge.pages import embed_text as page_text
from learning.events import MemoryFillConfigurationRefused
from learning.memory import diary, episodes
from learning.models import DiaryEntry, Duty, Episode
from learning.passes import fill_ledger
from learning.passes.fill_pieces import fill_pieces
from learning.passes.fill_requests import EndMinute, Minute, RanOut, Row, fill_rows
from learning.transcripts.models import Shard

log = logging.getLogger("learning.passes.embed_fill")

CONFIGURATION_PAUSE = timedelta(hours=1)
PAGE = 200
STATE_DUTY = "learning.embed_fill.state"


def lacking(queryset: QuerySet, *, model: str, dim: int, now: datetime) -> QuerySet:
    """Rows with no vector of ``model`` at ``dim`` that are not held back."""
    return queryset.exclude(Q(embedding__isnull=False) & Q(embedding_model=model) & Q(embedding_dim=dim)).filter(
        Q(embed_held_until__isnull=True) | Q(embed_held_until__lte=now)
    )


EMBEDDED = (DiaryEntry, Episode, Shard, Page)  # every table the fill keeps at the current model


def _narrow(qs: QuerySet, *, model: str, dim: int, now: datetime, only_model: str | None) -> QuerySet:
    if only_model == "none":
        qs = qs.filter(embedding__isnull=True)
    elif only_model:
        qs = qs.filter(embedding_model=only_model)
    return lacking(qs, model=model, dim=dim, now=now)


def pending(seat: Seat, *, model: str, dim: int, now: datetime, only_model: str | None = None) -> tuple[QuerySet, QuerySet, QuerySet]:
    """The seat's live notes, raw turns and transcript shards to fill (``only_model``: those stamped
    with that model; ``"none"`` for the vectorless)."""
    sources = (diary.live(seat, now), episodes.raw(seat), Shard.objects.filter(seat=seat))
    notes, turns, shards = (_narrow(qs, model=model, dim=dim, now=now, only_model=only_model) for qs in sources)
    return notes, turns, shards


def pending_pages(*, model: str, dim: int, now: datetime, only_model: str | None = None) -> QuerySet:
    return _narrow(Page.objects.all(), model=model, dim=dim, now=now, only_model=only_model)


def rows_of(seat: Seat, embedder, now: datetime, *, only_model: str | None = None):
    """Notes, then raw turns, then shards, in id order, a page at a time."""
    sources = zip(pending(seat, model=embedder.model, dim=embedder.dim, now=now, only_model=only_model),
                  (lambda d: d.content, episodes.text_of, lambda s: s.text), strict=True)
    yield from _paged(sources, embedder)


def page_rows(embedder, now: datetime, *, only_model: str | None = None):
    """Knowledge pages (title and body, as the page write embeds them), in id order."""
    qs = pending_pages(model=embedder.model, dim=embedder.dim, now=now, only_model=only_model)
    yield from _paged([(qs, lambda p: page_text(title=p.title, body=p.body))], embedder)


def _paged(sources, embedder):
    for qs, text_of in sources:
        last = 0
        while True:
            page = list(qs.filter(pk__gt=last).order_by("pk")[:PAGE])
            for obj in page:
                text = text_of(obj)
                yield Row(obj=obj, text=text, pieces=pieces_of(text, embedder.max_input_chars))
            if len(page) < PAGE:
                break
            last = page[-1].pk


# ---- state ---------------------------------------------------------------------------------------


def fingerprint(spec) -> str:
    """What holds and pauses are about: the provider's model, width, limits and endpoint (not its key)."""
    parts = (spec.kind, spec.model, spec.dimensions, spec.max_input_chars, spec.requests_per_minute,
             spec.bytes_per_minute, spec.base_url)
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


def load_state() -> dict:
    row = Duty.objects.filter(name=STATE_DUTY).first()
    return dict(row.last_result) if row else {}


def save_state(state: dict) -> None:
    Duty.objects.update_or_create(name=STATE_DUTY, defaults={"last_result": state})


def ensure_vector_indexes(*, using: str = "default", embedder=None) -> list[str]:
    """The approximate indexes of the configured embedder's width (``core.vectors.ensure_index``), made
    once; a width known only after the endpoint first answers gets its index on the next fill."""
    try:
        embedder = embedder or get_embedder()
    except (ImproperlyConfigured, ImportError, ProviderError):
        return []
    if embedder is None or not getattr(embedder, "dim", None):
        return []
    return [vectors.index_name(table, embedder.dim) for table in vectors.INDEXED_TABLES
            if vectors.ensure_index(table, embedder.dim, using=using)]


def release_holds() -> int:
    """An apply that changes the provider tries every held row again at once, with its neighbours
    (what was refused alone was refused by the old provider)."""
    with transaction.atomic():
        for model in EMBEDDED:
            model.objects.filter(embed_pieces__alone=True).update(embed_pieces=None)
        return sum(
            model.objects.filter(embed_held_until__isnull=False).update(embed_held_until=None)
            for model in EMBEDDED
        )


def _state_for(spec) -> tuple[dict, int]:
    state, fp = load_state(), fingerprint(spec)
    if state.get("fingerprint") == fp:
        return state, 0
    return {"fingerprint": fp}, release_holds()


# ---- the pass ------------------------------------------------------------------------------------


def _seats_from(cursor: int | None, seat: Seat | None) -> list:
    if seat is not None:
        return [seat]
    seats = list(Seat.objects.filter(active=True).order_by("id"))
    if cursor is None:
        return seats
    return [s for s in seats if s.id >= cursor] + [s for s in seats if s.id < cursor]


def budget_for(spec, embedder, now: datetime) -> Minute:
    """This sender's view of ``now``'s wall-clock minute: the company's whole budget, shared with
    every other sender in the same minute through the ledger."""
    return Minute(embedder=embedder, now=now, started=fill_ledger.open_minute(now),
                  max_requests=spec.requests_per_minute, max_bytes=spec.bytes_per_minute,
                  request_bytes=max(1, spec.bytes_per_minute // max(1, spec.requests_per_minute)))


def dry_run_counts(seats, embedder, now: datetime, only_model: str | None = None) -> dict:
    per_seat = {}
    for s in seats:
        notes, turns, shards = pending(s, model=embedder.model, dim=embedder.dim, now=now, only_model=only_model)
        per_seat[s.handle] = {"notes": notes.count(), "episodes": turns.count(), "shards": shards.count()}
    pages = pending_pages(model=embedder.model, dim=embedder.dim, now=now, only_model=only_model).count()
    return {"ran": False, "dry_run": True, "model": embedder.model, "dim": embedder.dim, "would_fill": per_seat,
            "would_fill_pages": pages}


def run_fill(
    *, seat: Seat | None = None, now: datetime | None = None, dry_run: bool = False, embedder=None, only_model: str | None = None,
    progress=None,
) -> dict:
    """One minute's fill; returns what it sent, filled, held and why it stopped."""
    now = now or timezone.now()
    try:
        embedder = embedder or get_embedder()
    except (ImproperlyConfigured, ImportError, ProviderError) as exc:
        return {"ran": False, "why": f"the embedder could not be built: {type(exc).__name__}: {exc}"}
    if embedder is None:
        return {"ran": False, "why": "embeddings are off (providers.embeddings.kind = none)"}
    spec = config.current().providers.embeddings
    if not dry_run:
        ensure_vector_indexes(embedder=embedder)
    state, released = _state_for(spec)
    paused = parse_datetime(state["paused_until"]) if state.get("paused_until") else None
    if paused and paused > now:
        save_state(state)
        return {"ran": False, "paused_until": paused.isoformat(), "why": state.get("paused_why", "")}
    state.pop("paused_until", None)
    seats = _seats_from(state.get("cursor_seat_id"), seat)
    if dry_run:
        return dry_run_counts(seats, embedder, now, only_model)
    minute = budget_for(spec, embedder, now)
    stopped = _fill_seats(seats, minute, state, cursor_moves=seat is None, only_model=only_model, progress=progress)
    save_state(state)
    paused_now = {"paused_until": state["paused_until"]} if state.get("paused_until") else {}
    minute_requests, minute_bytes = fill_ledger.spent(minute.started)
    return {"ran": True, "model": embedder.model, "dim": embedder.dim, "minute": minute.started.isoformat(),
            "minute_requests": minute_requests, "minute_bytes": minute_bytes,
            "released_holds": released, "stopped": stopped, **paused_now, **minute.report}


def _fill_seats(seats, minute: Minute, state: dict, *, cursor_moves: bool, only_model=None, progress=None) -> str:
    for s in seats:
        try:
            fill_rows(rows_of(s, minute.embedder, minute.now, only_model=only_model), minute)
            fill_pieces(s, minute)
        except RanOut:
            return _stop(state, s, "the minute's budget ran out", cursor_moves)
        except EndMinute as exc:
            if exc.pause:
                _pause(state, minute, exc.why)
            return _stop(state, s, exc.why, cursor_moves)
        if progress:
            progress(1, s.handle)
    try:
        fill_rows(page_rows(minute.embedder, minute.now, only_model=only_model), minute)
    except RanOut:
        return "the minute's budget ran out (at the knowledge pages)"
    except EndMinute as exc:
        if exc.pause:
            _pause(state, minute, exc.why)
        return f"{exc.why} (at the knowledge pages)"
    if cursor_moves:
        state["cursor_seat_id"] = None
    return "every seat filled"


def _stop(state: dict, seat: Seat, why: str, cursor_moves: bool) -> str:
    if cursor_moves:
        state["cursor_seat_id"] = seat.id
    return f"{why} (at seat {seat.handle})"


def _pause(state: dict, minute: Minute, why: str) -> None:
    until = minute.now + CONFIGURATION_PAUSE
    state["paused_until"], state["paused_why"] = until.isoformat(), why
    log.error("embedding fill paused until %s: %s", until, why)
    events.publish(MemoryFillConfigurationRefused(model=minute.embedder.model, dim=minute.embedder.dim,
                                                  paused_until=until, why=why))
