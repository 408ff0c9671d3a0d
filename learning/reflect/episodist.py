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

from core import events
from core.event_types import EpisodeWritten
from core.providers.embeddings import embed_many, get_embedder
from core.providers.embeddings.base import DIARY_EMBED_BUDGET
from core.statements import Compiled
from crewlet.models import Seat
from learning import episodes
from learning.models import Episode

log = logging.getLogger("learning.reflect.episodist")

NAME = "episodist"
CANDIDATES = "episode_candidates"  # the batched read of the episodes this pass may replace
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


def run(ctx):
    """The embed (no transaction open); returns the write that files the episode."""
    fields = _fields(ctx)
    text = episodes.embed_text(label=fields["task_summary"], ask=fields["ask"], what_it_did=fields["plan_summary"])
    vector, pieces, piece_vectors = _embed(text, fields)

    def write() -> dict:
        episode, existing = _file(ctx, fields, vector, pieces, piece_vectors)
        events.publish(
            EpisodeWritten(
                episode_id=episode.pk, replaced=existing, embedded=episode.embedding is not None,
                label=episode.task_summary,
            ),
            seat=ctx.seat, turn_id=ctx.run_id,
        )
        return {"episode_id": episode.pk, "replaced": existing, "embedded": episode.embedding is not None}

    return write


def _by_run(seat_id: int, run_id: str):
    return Episode.objects.filter(seat=Seat(pk=seat_id), kind=Episode.RAW, run_id=run_id).exclude(run_id="").values_list(
        "id", "run_id")


def _by_work_key(seat_id: int, work_key: str):
    return Episode.objects.filter(seat=Seat(pk=seat_id), kind=Episode.RAW, work_key=work_key).values_list("id", "run_id")


# every engaged turn reads them: compiled once (core.statements); the UNION's seat is bound once an arm
_BY_RUN = Compiled(_by_run, -1, "\0run-id")
_BY_WORK_KEY = Compiled(_by_work_key, -1, "\0work-key")
_BY_EITHER = Compiled(lambda seat_id, run_id, seat_again, work_key: _by_run(seat_id, run_id).union(
    _by_work_key(seat_again, work_key), all=True), -1, "\0run-id", -2, "\0work-key")


def _candidates(ctx, run_id: str, work_key: str):
    """The ids (and run ids) of the episodes this pass may replace: ONE statement, a UNION of two
    lookups each on its own index (the run id's unique one, the work key's): an OR of the two would
    scan every episode of the seat. None when the turn has neither key."""
    if run_id and work_key:
        return _BY_EITHER.bound(ctx.seat.pk, run_id, ctx.seat.pk, work_key)
    if run_id:
        return _BY_RUN.bound(ctx.seat.pk, run_id)
    if work_key:
        return _BY_WORK_KEY.bound(ctx.seat.pk, work_key)
    return None


def reads(ctx) -> dict:
    """What ``write`` reads, for the pass's batched read (``pass_reads``): the seat's passes are
    serialised by its lock, so the episode to replace is the same before the transaction as in it."""
    candidates = _candidates(ctx, ctx.run_id, ctx.record.work_key)
    return {CANDIDATES: candidates} if candidates is not None else {}


def _existing(ctx, fields: dict) -> int | None:
    """The episode this pass replaces: this run's own (a redelivered pass), else the work item's (a re-run)."""
    if not (fields["run_id"] or fields["work_key"]):
        return None
    rows = sorted(ctx.fetched(CANDIDATES, lambda: _candidates(ctx, fields["run_id"], fields["work_key"])))
    mine = [pk for pk, run_id in rows if fields["run_id"] and run_id == fields["run_id"]]
    found = mine or [pk for pk, _ in rows]
    return found[0] if found else None


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
