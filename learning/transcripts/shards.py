"""Episodes in, candidate shards out: storing what an adapter read, then extracting lessons.

An adapter's episodes and sessions are stored idempotently (a re-read yields the same keys, so
nothing lands twice). Each stored episode is asked, once, for its lessons through the
``transcript_shards`` purpose; each lesson becomes a ``Shard`` with its source session and its
vector. A failed or unaffordable call leaves the episode unextracted for the next run.
"""

from __future__ import annotations

import hashlib
import logging
import re
from typing import TYPE_CHECKING

from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.utils import timezone

from core import auxiliary, budgets
from core.auxiliary import AuxResult
from core.providers.embeddings import EmbedResult, embed_many
from core.providers.errors import ProviderError
from core.purposes import AnswerUnparseable
from core.scrub import scrub
from learning.purposes import transcript_shards
from learning.transcripts.adapters import ReadResult
from learning.transcripts.models import Shard, TranscriptEpisode, TranscriptSession, TranscriptSource

if TYPE_CHECKING:
    from crewlet.models import Seat

log = logging.getLogger("learning.transcripts")

SHARD_EMBED_BUDGET = 30.0  # seconds for one run's batch of lessons; past it they are stored vectorless


def text_hash(text: str) -> str:
    """The key lessons are compared and drafted by: case and spacing do not make a new lesson."""
    return hashlib.sha256(re.sub(r"\s+", " ", text.strip().lower()).encode()).hexdigest()


def _merge_counts(into: dict, more: dict) -> dict:
    out = {family: dict(names) if isinstance(names, dict) else names for family, names in (into or {}).items()}
    for family, value in (more or {}).items():
        if isinstance(value, dict):
            bucket = out.setdefault(family, {})
            for name, n in value.items():
                bucket[name] = bucket.get(name, 0) + n
        else:
            out[family] = out.get(family, 0) + value
    return out


@transaction.atomic
def store_read(*, seat: Seat, source: TranscriptSource, result: ReadResult) -> list[TranscriptEpisode]:
    """Record the sessions and the new episodes of one read, and move the source's watermark.

    A read that started the file over (it was rewritten, not appended) brings every count again, so
    the source's counts are replaced rather than added to.
    """
    if result.restarted:
        TranscriptSession.objects.filter(source=source).update(human_messages=0, pseudo_user={}, observations={})
    ids = [seen.session_id for seen in result.sessions]
    known = {row.session_id: row for row in TranscriptSession.objects.select_for_update().filter(source=source, session_id__in=ids)}
    fresh, sessions = [], {}
    for seen in result.sessions:
        row = known.get(seen.session_id)
        if row is None:
            row = TranscriptSession(source=source, seat=seat, session_id=seen.session_id, cwd=seen.cwd)
            fresh.append(row)
        row.cwd = row.cwd or seen.cwd
        row.started_at = min(filter(None, [row.started_at, seen.started_at]), default=None)
        row.ended_at = max(filter(None, [row.ended_at, seen.ended_at]), default=None)
        row.human_messages += seen.human_messages
        row.pseudo_user = _merge_counts(row.pseudo_user, seen.pseudo_user)
        row.observations = _merge_counts(row.observations, seen.observations)
        sessions[seen.session_id] = row
    TranscriptSession.objects.bulk_create(fresh)
    if known:
        for row in known.values():
            row.ingested_at = timezone.now()
        TranscriptSession.objects.bulk_update(
            list(known.values()), ["cwd", "started_at", "ended_at", "human_messages", "pseudo_user", "observations", "ingested_at"]
        )
    created = _new_episodes(seat, source, sessions, result.episodes)
    source.watermark = result.watermark
    source.read_at = timezone.now()
    source.save(update_fields=["watermark", "read_at"])
    return created


def _new_episodes(seat: Seat, source, sessions: dict, episodes) -> list[TranscriptEpisode]:
    """Insert the episodes not stored yet (a re-read yields the same keys, so nothing lands twice)."""
    rows = []
    for episode in episodes:
        session = sessions.get(episode.session_id)
        if session is None:
            session = sessions[episode.session_id] = TranscriptSession.objects.get_or_create(
                source=source, session_id=episode.session_id, defaults={"seat": seat}
            )[0]
        rows.append(TranscriptEpisode(
            seat=seat, session=session, key=episode.key, kind=episode.kind, ask=episode.ask, attempt=episode.attempt,
            failure=episode.failure, correction=episode.correction, started_at=episode.started_at, ended_at=episode.ended_at,
        ))
    if not rows:
        return []
    known = set(TranscriptEpisode.objects.filter(session__in=list(sessions.values()), key__in=[r.key for r in rows]).values_list("session_id", "key"))
    fresh, seen = [], set()
    for row in rows:
        ident = (row.session.pk, row.key)
        if ident not in known and ident not in seen:
            seen.add(ident)
            fresh.append(row)
    return TranscriptEpisode.objects.bulk_create(fresh)


def nothing_new(source: TranscriptSource, result: ReadResult) -> bool:
    """A read that moved nothing: no write at all (re-reading a whole corpus stays cheap)."""
    return result.watermark == source.watermark and not result.episodes and not result.bytes_read


def episode_inputs(episode: TranscriptEpisode) -> dict:
    return {
        "kind": episode.kind, "ask": episode.ask, "attempt": episode.attempt,
        "failure": episode.failure, "correction": episode.correction,
    }


EXTRACT_BATCH = 50  # episodes asked between two budget checks; their spend is recorded in one write


def extract(*, seat: Seat, episodes: list[TranscriptEpisode], warnings: list[str], stage: str = "background") -> list[Shard]:
    """Ask each unextracted episode for its lessons; store each as a shard with its vector.

    Episodes go in batches: one budget check before a batch, one charge and one transaction after it.
    """
    todo = [e for e in episodes if e.extracted_at is None]
    created: list[Shard] = []
    for start in range(0, len(todo), EXTRACT_BATCH):
        if budgets.has_room(seat) is False:
            warnings.append(f"seat {seat.handle} is over its token budget; {len(todo) - start} episode(s) left for the next run")
            break
        pending: list[tuple[TranscriptEpisode, list[str]]] = []
        answers: list[AuxResult | ProviderError | AnswerUnparseable] = []
        for episode in todo[start:start + EXTRACT_BATCH]:
            try:
                answer = auxiliary.call(seat=seat, stage=stage, purpose=transcript_shards.NAME,
                                  inputs=transcript_shards.Inputs(episode=episode_inputs(episode)), defer_record=True)
            except (ProviderError, AnswerUnparseable) as exc:
                warnings.append(f"episode {episode.key}: lessons not extracted ({exc})")
                answers.append(exc)  # its attempts are charged and recorded with the batch
                continue
            answers.append(answer)
            # a model may echo a secret it was never shown in full; scrub what comes back too
            pending.append((episode, [scrub(lesson) for lesson in answer.value]))
        with transaction.atomic():
            auxiliary.record_batch(seat, answers)
            created.extend(_store_shards(seat, pending))
    return created


def embed_lessons(texts: list[str]) -> list[EmbedResult]:
    """Vectors for lessons; an embedder that cannot even be built stores them vectorless, never fails the run."""
    if not texts:
        return []
    try:
        return embed_many(texts, budget=SHARD_EMBED_BUDGET)
    except (ImproperlyConfigured, ImportError) as exc:
        log.warning("no embedder (%s); %d lesson(s) stored without a vector", exc, len(texts))
        return [EmbedResult(None, "", "unconfigured", str(exc)) for _ in texts]


def _store_shards(seat: Seat, pending) -> list[Shard]:
    """One bulk insert of the batch's shards, one update marking its episodes extracted."""
    texts = [lesson for _episode, lessons in pending for lesson in lessons]
    vectors = iter(embed_lessons(texts))
    rows = []
    for episode, lessons in pending:
        for lesson in lessons:
            shard = Shard(seat=seat, episode=episode, session_id=episode.session.session_id, text=lesson, text_hash=text_hash(lesson))
            result = next(vectors)
            shard.set_vector(result.vector, result.model)
            rows.append(shard)
    with transaction.atomic():
        created = Shard.objects.bulk_create(rows)
        TranscriptEpisode.objects.filter(pk__in=[episode.pk for episode, _l in pending]).update(extracted_at=timezone.now())
    return created


def make_shard(*, seat: Seat, text: str, session_id: str, episode: TranscriptEpisode | None = None) -> Shard:
    """One shard stored directly (tests, and lessons stated outside a transcript)."""
    shard = Shard(seat=seat, episode=episode, session_id=session_id, text=text, text_hash=text_hash(text))
    result = embed_lessons([text])[0]
    shard.set_vector(result.vector, result.model)
    shard.save()
    return shard
