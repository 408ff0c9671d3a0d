"""## Personal memory: the hybrid candidate pool, the relevance filter, the digest.

The pool is ``Diary.recall`` (vector top-50) ∪ ``Diary.recent`` (recency top-50), deduped by id;
the auxiliary filter, told who triggered the turn, picks the digest. Only the notes it SELECTED
(and the digest shows) count as used: counting candidates would move every counter every turn.
``refresh_memory`` runs through the same pool and filter.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import TYPE_CHECKING

from django.db import DatabaseError

from core import auxiliary
from learning.memory import diary
from learning.models import DiaryEntry
from learning.prefetch import bounds
from learning.prefetch.blocks import BlockResult, done
from learning.prefetch.hints import EmptyMemoryHint
from learning.prefetch.turn_state import AuxDidNotAnswer, PrefetchContext
from learning.purposes import memory_relevance_filter

if TYPE_CHECKING:
    from crewlet.models import Seat

log = logging.getLogger("learning.prefetch")

NAME = "personal_memory"
HEADING = "## Personal memory"
PURPOSE = "memory_relevance_filter"


def has_notes(seat: Seat) -> bool:
    """The cheap recency read the gate path still makes, so the hint shows only when it is actionable."""
    try:
        return diary.has_live(seat)
    except DatabaseError:
        log.warning("diary unreadable for %s", seat.handle, exc_info=True)
        return False


def filter_inputs(
    *, query: str, triggered_by: list[str], candidates: list[diary.PoolNote]
) -> memory_relevance_filter.Inputs:
    return memory_relevance_filter.Inputs(
        query=query,
        triggered_by=triggered_by,
        max_selected=bounds.MEMORY_FILTER_MAX_SELECTED,
        candidates=[
            {"id": e.id, "kind": e.kind, "written": e.created_at.date().isoformat(), "content": e.content}
            for e in candidates
        ],
    )


def selected_ids(answer: list[int], candidates: list[diary.PoolNote]) -> list[int]:
    """The filter's picks, in its order, restricted to the pool it was shown (an invented id is dropped)."""
    known = {e.id for e in candidates}
    return list(dict.fromkeys(i for i in answer if i in known))[: bounds.MEMORY_FILTER_MAX_SELECTED]


def note_line(entry: DiaryEntry | diary.PoolNote) -> str:
    content = entry.content.replace("\n", "\n  ")
    if entry.kind == DiaryEntry.SHORT and entry.ttl_until:
        return f"- {content} (situational, until {entry.ttl_until.date().isoformat()})"
    return f"- {content}"


def render_notes(entries: list[DiaryEntry] | list[diary.PoolNote]) -> str:
    return "\n".join(note_line(e) for e in entries)


def triggered_by(ctx: PrefetchContext) -> list[str]:
    return [i.who for i in ctx.request.senders(exclude_handle=ctx.seat.handle)]


def _hint(ctx: PrefetchContext, *, pool: list[diary.PoolNote] | None = None) -> BlockResult:
    """The empty-memory hint, for a seat that holds a live note: a pool just read non-empty says so
    (it holds live notes only), so only the gate path reads it (``has_notes``)."""
    if pool or (pool is None and has_notes(ctx.seat)):
        return BlockResult(NAME, f"{HEADING}\n{EmptyMemoryHint}", selection_count=0)
    return BlockResult(NAME, selection_count=0)


def start(ctx: PrefetchContext):
    if ctx.thin:  # recency read only: no embedding, no filter
        return done(_hint(ctx))
    embedded = ctx.turn_vector()
    try:
        pool = diary.candidates(seat=ctx.seat, vector=embedded.vector, model=embedded.model, query=ctx.request.ask,
                                now=ctx.now, ranked_words=ctx.ranked_words("notes"))
    except DatabaseError:
        log.warning("diary pool unreadable for %s", ctx.seat.handle, exc_info=True)
        return done(BlockResult(NAME, selection_count=0))
    if not pool:
        return done(BlockResult(NAME, selection_count=0))
    if not auxiliary.available(ctx.seat):
        return done(_hint(ctx, pool=pool))
    future = ctx.submit(PURPOSE, filter_inputs(query=ctx.request.ask, triggered_by=triggered_by(ctx), candidates=pool))
    return lambda: _finish(ctx, pool, future)


def _finish(ctx: PrefetchContext, pool: list[diary.PoolNote], future) -> BlockResult:
    try:
        picked = selected_ids(ctx.collect(future), pool)
    except AuxDidNotAnswer:
        return _hint(ctx, pool=pool)
    by_id = {e.id: e for e in pool}
    shown = [by_id[i] for i in picked[: bounds.MEMORY_BLOCK_NOTES]]
    if not shown:
        return _hint(ctx, pool=pool)
    ctx.defer(partial(diary.mark_used, [e.id for e in shown]))
    return BlockResult(NAME, f"{HEADING}\n{render_notes(shown)}", selection_count=len(shown),
                       shown={"notes": [e.id for e in shown]})
