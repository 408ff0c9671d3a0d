"""Episodist: one raw episode per turn, embedded as ONE text (label once, ask under its senders'
names, what it did), whole, and its ask's opening lines one by one (``episode_pieces``) for the
hybrid search.

A scheduled turn's label names its schedule and never the fire's run id, which differs on every
fire. A redelivered trigger (same work key, new run) is collapsed onto the episode already filed
under that work key rather than filed twice. Compacted rows are never touched or embedded here.
"""

from __future__ import annotations

import logging

from django.core.exceptions import ImproperlyConfigured
from django.db import transaction

from core import events
from core.event_types import EpisodeWritten
from core.providers.embeddings import embed_many, get_embedder
from core.providers.embeddings.base import DIARY_EMBED_BUDGET
from learning import episodes
from learning.models import Episode

log = logging.getLogger("learning.reflect.episodist")

NAME = "episodist"
EPISODE_EMBED_BUDGET = DIARY_EMBED_BUDGET  # one short text; a row without a vector is filled later


def wired(learning) -> bool:
    return learning.enabled


def applies(ctx) -> str | None:
    return None  # every engaged turn is an episode, settled or not


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
    """The whole text's vector and its ask's opening lines', in one request (the fill recomputes both alike)."""
    try:
        embedder = get_embedder()
    except (ImproperlyConfigured, ImportError):
        embedder = None
    pieces = (episodes.search_pieces(label=fields["task_summary"], ask=fields["ask"],
                                     what_it_did=fields["plan_summary"], max_chars=embedder.max_input_chars)
              if embedder is not None else [])
    results = embed_many([text, *pieces], budget=EPISODE_EMBED_BUDGET)
    return results[0], pieces, [r.vector for r in results[1:]]


def run(ctx) -> dict:
    fields = _fields(ctx)
    text = episodes.embed_text(label=fields["task_summary"], ask=fields["ask"], what_it_did=fields["plan_summary"])
    vector, pieces, piece_vectors = _embed(text, fields)
    with transaction.atomic():
        # this run's own episode first (a redelivered pass), else the work item's latest (a re-run)
        mine = Episode.objects.select_for_update().filter(seat=ctx.seat, kind=Episode.RAW)
        existing = mine.filter(run_id=fields["run_id"]).first() if fields["run_id"] else None
        if existing is None and fields["work_key"]:
            existing = mine.filter(work_key=fields["work_key"]).first()
        episode = existing or Episode(seat=ctx.seat)
        for key, value in fields.items():
            setattr(episode, key, value)
        episode.set_vector(vector.vector, vector.model)
        episode.save()
        if episode.embedding is not None:
            episodes.write_pieces(episode, pieces, piece_vectors, vector.model)
        else:
            episodes.write_pieces(episode, [], [], "")  # the fill embeds the whole and its lines together
    events.publish(
        EpisodeWritten(
            episode_id=episode.pk, replaced=existing is not None, embedded=episode.embedding is not None,
            label=episode.task_summary,
        ),
        seat=ctx.seat, turn_id=ctx.run_id,
    )
    return {"episode_id": episode.pk, "replaced": existing is not None, "embedded": episode.embedding is not None}
