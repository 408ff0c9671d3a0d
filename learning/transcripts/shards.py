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

from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.utils import timezone

from core import aux, budgets
from core.providers.embeddings import EmbedResult, embed_many
from core.providers.errors import ProviderError
from core.purposes import AnswerUnparseable
from learning.transcripts import purposes as tp
from learning.transcripts.adapters import ReadResult
from learning.transcripts.models import Shard, TranscriptEpisode, TranscriptSession, TranscriptSource
from learning.transcripts.scrub import scrub

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
def store_read(*, seat, source: TranscriptSource, result: ReadResult) -> list[TranscriptEpisode]:
    """Record the sessions and the new episodes of one read, and move the source's watermark.

    A read that started the file over (it was rewritten, not appended) brings every count again, so
    the source's counts are replaced rather than added to.
    """
    if result.restarted:
        TranscriptSession.objects.filter(source=source).update(human_messages=0, pseudo_user={}, observations={})
    sessions = {}
    for seen in result.sessions:
        row, _created = TranscriptSession.objects.select_for_update().get_or_create(
            source=source, session_id=seen.session_id, defaults={"seat": seat, "cwd": seen.cwd}
        )
        row.cwd = row.cwd or seen.cwd
        row.started_at = min(filter(None, [row.started_at, seen.started_at]), default=None)
        row.ended_at = max(filter(None, [row.ended_at, seen.ended_at]), default=None)
        row.human_messages += seen.human_messages
        row.pseudo_user = _merge_counts(row.pseudo_user, seen.pseudo_user)
        row.observations = _merge_counts(row.observations, seen.observations)
        row.save()
        sessions[seen.session_id] = row
    created = _new_episodes(seat, source, sessions, result.episodes)
    source.watermark = result.watermark
    source.read_at = timezone.now()
    source.save(update_fields=["watermark", "read_at"])
    return created


def _new_episodes(seat, source, sessions: dict, episodes) -> list[TranscriptEpisode]:
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


def extract(*, seat, episodes: list[TranscriptEpisode], warnings: list[str], stage: str = "background") -> list[Shard]:
    """Ask each unextracted episode for its lessons; store each as a shard with its vector."""
    pending: list[tuple[TranscriptEpisode, list[str]]] = []
    for episode in episodes:
        if episode.extracted_at is not None:
            continue
        if budgets.has_room(seat) is False:
            warnings.append(f"seat {seat.handle} is over its token budget; {len(episodes)} episode(s) left for the next run")
            break
        try:
            answer = aux.call(seat=seat, stage=stage, purpose=tp.SHARDS, inputs={"episode": episode_inputs(episode)})
        except (ProviderError, AnswerUnparseable) as exc:
            warnings.append(f"episode {episode.key}: lessons not extracted ({exc})")
            continue
        # a model may echo a secret it was never shown in full; scrub what comes back too
        pending.append((episode, [scrub(lesson) for lesson in answer.value]))
    return _store_shards(seat, pending)


def embed_lessons(texts: list[str]) -> list[EmbedResult]:
    """Vectors for lessons; an embedder that cannot even be built stores them vectorless, never fails the run."""
    if not texts:
        return []
    try:
        return embed_many(texts, budget=SHARD_EMBED_BUDGET)
    except (ImproperlyConfigured, ImportError) as exc:
        log.warning("no embedder (%s); %d lesson(s) stored without a vector", exc, len(texts))
        return [EmbedResult(None, "", "unconfigured", str(exc)) for _ in texts]


def _store_shards(seat, pending) -> list[Shard]:
    texts = [lesson for _episode, lessons in pending for lesson in lessons]
    vectors = iter(embed_lessons(texts))
    now, created = timezone.now(), []
    with transaction.atomic():
        for episode, lessons in pending:
            for lesson in lessons:
                shard = Shard(seat=seat, episode=episode, session_id=episode.session.session_id, text=lesson,
                              text_hash=text_hash(lesson))
                result = next(vectors)
                shard.set_vector(result.vector, result.model)
                shard.save()
                created.append(shard)
            episode.extracted_at = now
            episode.save(update_fields=["extracted_at"])
    return created


def make_shard(*, seat, text: str, session_id: str, episode: TranscriptEpisode | None = None) -> Shard:
    """One shard stored directly (tests, and lessons stated outside a transcript)."""
    shard = Shard(seat=seat, episode=episode, session_id=session_id, text=text, text_hash=text_hash(text))
    result = embed_lessons([text])[0]
    shard.set_vector(result.vector, result.model)
    shard.save()
    return shard
