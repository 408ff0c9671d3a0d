"""Episodist: one raw episode per turn, embedded as ONE text (label once, ask under its senders'
names, what it did), whole, and its own messages' opening lines one by one (``episode_pieces``) for the
hybrid search.

A scheduled turn's label names its schedule and never the fire's run id, which differs on every
fire. A redelivered trigger (same work key, new run) is collapsed onto the episode already filed
under that work key rather than filed twice. Compacted rows are never touched or embedded here.
"""

from __future__ import annotations

import logging

from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from core import events
from core.providers.embeddings import embed_many, get_embedder
from core.providers.embeddings.base import DIARY_EMBED_BUDGET
from crewlet.config.schema import Learning
from learning.events import EpisodeWritten
from learning.memory import episodes
from learning.models import Episode
from learning.reflection.turn_context import TurnContext
from learning.reflection.worker import Prepared, Result

log = logging.getLogger("learning.reflection.workers.episodist")

EPISODE_EMBED_BUDGET = DIARY_EMBED_BUDGET  # one short text; a row without a vector is filled later


def schedule_name(ctx) -> str:
    name = ctx.record.schedule
    if not name and ":" in ctx.conversation_id:
        name = ctx.conversation_id.split(":", 1)[1]
    return name or ctx.conversation_id


def label_of(ctx) -> str:
    """The waking event's label; for a scheduled turn, one that names the schedule."""
    if ctx.scheduled:
        return f"{ctx.seat.handle} was assigned scheduled work {schedule_name(ctx)}"
    label = ctx.label
    if ctx.run_id and ctx.run_id in label:
        label = " ".join(label.replace(ctx.run_id, " ").split())
    return label


def searchable_ask(ctx) -> str:
    """The ask with every message under its sender's name: a turn is found by who asked as well as what
    (a single-sender ask otherwise carries the name only if the runtime's label happens to)."""
    record = ctx.record
    spoken = [i for i in record.interactions if i.body.strip()]
    if record.ask.strip() or not spoken:
        return ctx.ask
    text = "\n".join(f"{i.sender.name}: {i.body.strip()}" if i.sender.name else i.body.strip() for i in spoken)
    if not record.subject_is_label and record.label.strip():
        text = f"{record.label.strip()}\n{text}"
    return text


def _fields(ctx) -> dict:
    record = ctx.record
    started, ended = record.started_at or ctx.now, record.ended_at or ctx.now
    duration = record.duration_ms
    if duration is None and record.started_at and record.ended_at:
        duration = int((ended - started).total_seconds() * 1000)
    return {
        "kind": Episode.RAW,
        "run_id": ctx.run_id,
        "work_key": record.work_key,
        "work_item": record.work_item,
        "conversation_id": ctx.conversation_id,
        "conversation_kind": ctx.conversation_kind,
        "task_summary": label_of(ctx),
        "ask": searchable_ask(ctx),
        "plan_summary": ctx.what_it_did,
        "tool_sequence": ctx.tool_sequence,
        "skills_used": ctx.skills_offered,
        "review_outcome": ctx.outcome,
        "started_at": started,
        "ended_at": ended,
        "duration_ms": duration,
    }


def _embed(text: str, fields: dict):
    """The whole text's vector and its own messages' opening lines', in one request (the fill recomputes both alike)."""
    try:
        embedder = get_embedder()
    except (ImproperlyConfigured, ImportError):
        embedder = None
    pieces = (episodes.search_pieces(label=fields["task_summary"], ask=fields["ask"],
                                     what_it_did=fields["plan_summary"], max_chars=embedder.max_input_chars)
              if embedder is not None else [])
    results = embed_many([text, *pieces], budget=EPISODE_EMBED_BUDGET)
    return results[0], pieces, [r.vector for r in results[1:]]


def _existing(ctx, fields: dict) -> int | None:
    """The episode this pass replaces: this run's own (a redelivered pass), else the work item's (a re-run).

    One statement, a UNION of two lookups each on its own index (the run id's unique one, the work
    key's): an OR of the two would scan every episode of the seat."""
    run_id, work_key = fields["run_id"], fields["work_key"]
    if not run_id and not work_key:
        return None
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, true AS mine FROM episodes WHERE seat_id = %s AND kind = %s AND run_id = %s AND %s"
            " UNION ALL SELECT id, false FROM episodes WHERE seat_id = %s AND kind = %s AND work_key = %s AND %s"
            " ORDER BY mine DESC, id LIMIT 1",
            [ctx.seat.pk, Episode.RAW, run_id, bool(run_id), ctx.seat.pk, Episode.RAW, work_key, bool(work_key)],
        )
        row = cursor.fetchone()
    return row[0] if row else None


def _file(ctx, fields: dict, vector, pieces: list, piece_vectors: list) -> tuple[Episode, bool]:
    """Insert the episode, or overwrite the one it replaces with one UPDATE; then its line vectors."""
    existing = _existing(ctx, fields)
    episode = Episode(seat=ctx.seat, **fields)
    episode.set_vector(vector.vector, vector.model)
    if existing is None:
        episodes.insert(episode)
    else:
        episode.pk = existing
        vector_fields = {"embedding": episode.embedding, "embedding_model": episode.embedding_model,
                         "embedding_dim": episode.embedding_dim}
        Episode.objects.filter(pk=existing).update(**fields, **vector_fields)
    if episode.embedding is not None:
        episodes.write_pieces(episode, pieces, piece_vectors, vector.model, replace=existing is not None)
    elif existing is not None:
        episodes.write_pieces(episode, [], [], "")  # the fill embeds the whole and its lines together
    return episode, existing is not None


class Filed(Result):
    """The episode the turn was filed as: new, or the one it replaced; whether it has a vector yet."""

    episode_id: int
    replaced: bool
    embedded: bool


class Episodist:
    """The Episodist: every engaged turn filed as an episode."""

    name = "episodist"

    def wired(self, learning: Learning) -> bool:
        return learning.enabled

    def applies(self, ctx: TurnContext) -> str | None:
        return None  # every engaged turn is an episode, settled or not

    def run(self, ctx: TurnContext) -> Prepared:
        """The embed (no transaction open); returns the write that files the episode."""
        fields = _fields(ctx)
        text = episodes.embed_text(label=fields["task_summary"], ask=fields["ask"], what_it_did=fields["plan_summary"])
        vector, pieces, piece_vectors = _embed(text, fields)

        def write() -> Filed:
            episode, existing = _file(ctx, fields, vector, pieces, piece_vectors)
            events.publish(
                EpisodeWritten(
                    episode_id=episode.pk, replaced=existing, embedded=episode.embedding is not None,
                    label=episode.task_summary,
                ),
                seat=ctx.seat, turn_id=ctx.run_id,
            )
            return Filed(episode_id=episode.pk, replaced=existing, embedded=episode.embedding is not None)

        return write
