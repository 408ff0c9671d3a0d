"""The turn-start prefetch: run every block once per run id, freeze the prefix, publish the summary.

Frozen at turn start: a second request for the same run id (a self_iterate round) gets the stored
prefix back without recomputing anything, so the provider's prompt cache stays valid. Blocks start
in order (their auxiliary calls run concurrently under one deadline) and finish in order; a block
that raises renders nothing and never fails the turn.

The frozen prefix is committed before the turn start answers, so a repeat of the run id from any
server process, ``POST /turns`` and ``refresh_memory`` find it; a start that loses the race to freeze
its run id answers the winner's prefix. The turn start's other writes (the spend, the stamps, the
events, now and then the pruning) are made in the same transaction.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from django.db import IntegrityError

from learning.intake import prefetch_snapshots
from learning.models import PrefetchSnapshot
from learning.prefetch import (
    bounds,
    knowledge_block,
    ledger,
    onboarding,
    personal_memory,
    profiles,
    similar_work,
    skills_block,
    summary,
    thread,
    tool_skills,
)
from learning.prefetch.blocks import BlockResult
from learning.prefetch.request import PrefetchRequest
from learning.prefetch.turn_state import PrefetchContext

if TYPE_CHECKING:
    from crewlet.models import Seat

log = logging.getLogger("learning.prefetch")

# the engine's own block list: prefetch_summary's denominator is its length
BLOCKS = (
    similar_work,
    personal_memory,
    skills_block,
    knowledge_block,
    profiles,
    thread,
    onboarding,
    ledger,
)


def _start(module, ctx: PrefetchContext):
    try:
        return module.start(ctx)
    except Exception:
        log.exception("prefetch block %s failed to start for %s", module.NAME, ctx.seat.handle)
        return lambda: BlockResult(module.NAME)


def _finish(name: str, finisher) -> BlockResult:
    try:
        return finisher()
    except Exception:
        log.exception("prefetch block %s failed", name)
        return BlockResult(name)


# the blocks that start once the ask's vector is back; the others start before it (the episode recall
# waits for the vector in its finish, so the database-only blocks read theirs while the ask embeds)
VECTOR_BLOCKS = (personal_memory,)


def run_blocks(ctx: PrefetchContext, meanwhile=None):
    """Start every block, then finish them in the block list's order: ``(results, meanwhile())``.

    The ask's embed runs on a worker thread while the database-only blocks start, ``meanwhile``
    (the turn start's other work that needs no vector: the tool guidance) runs and the notes and past
    turns are ranked by the ask's words; the vector blocks start once it is back, and only then is the
    auxiliary deadline armed (the embed has its own budget).
    """
    ctx.begin_embed()
    started = {module.NAME: _start(module, ctx) for module in BLOCKS if module not in VECTOR_BLOCKS}
    beside = meanwhile() if meanwhile is not None else None
    if not ctx.thin:
        ctx.rank_by_words()
        ctx.turn_vector()
    ctx.arm_deadline()
    started.update({module.NAME: _start(module, ctx) for module in VECTOR_BLOCKS})
    try:
        return [_finish(module.NAME, started[module.NAME]) for module in BLOCKS], beside
    finally:
        ctx.release_uncollected()  # a call a failed block never collected is charged too


def prefetch(*, seat: Seat, request: PrefetchRequest) -> dict:
    """The turn's rendered blocks and summary; the same run id always gets the same prefix back."""
    stored = prefetch_snapshots.stored(seat_id=seat.pk, run_id=request.run_id)
    if stored is not None:
        return {**stored, "frozen": True}
    ctx = PrefetchContext.start(seat=seat, request=request)
    tools = request.tools if request.tools is not None else tuple(seat.role.tools if seat.role else ())
    results, (guidance, guidance_keys) = run_blocks(
        ctx, lambda: tool_skills.guidance(seat, tools, turn_id=request.run_id, announce=ctx.announce))
    built = summary.build(ctx, results)
    rendered = {
        "run_id": request.run_id,
        "ask": request.ask,
        "skills_offered": skills_block.offered_ids(results),
        "blocks": [{"name": r.name, "text": r.text, "hit": r.hit, "bytes": r.bytes, "shown": r.shown} for r in results],
        "guidance": guidance,
        "guidance_keys": guidance_keys,
        "prompt": "\n\n".join([r.text for r in results if r.text] + ([guidance] if guidance else [])),
        "summary": built.model_dump(mode="json"),
        "triggered_by": personal_memory.triggered_by(ctx),
    }
    summary.publish(ctx, built)

    def freeze() -> None:
        snapshot = PrefetchSnapshot.objects.create(run_id=request.run_id, seat=seat, rendered=rendered)
        if snapshot.pk % bounds.SNAPSHOT_PRUNE_EVERY == 0:
            bound_snapshots(seat)

    try:  # the frozen prefix and the turn start's other writes, in one transaction
        ctx.commit(freeze)
    except IntegrityError:  # a concurrent start of the same run froze first: its prefix (and writes) are the turn's
        ctx.charge_alone()
        stored = prefetch_snapshots.stored(seat_id=seat.pk, run_id=request.run_id)
        if stored is not None:
            return {**stored, "frozen": True}
        raise
    return {**rendered, "frozen": False}


def bound_snapshots(seat: Seat) -> None:
    """Keep the seat's most recent 256 runs' prefixes: a cache, not a leak (run once per 32 new ones).

    Per seat: a busy seat never evicts a quiet seat's frozen prefix of a turn still running.
    """
    keep = bounds.FROZEN_RUNS_KEPT
    mine = PrefetchSnapshot.objects.filter(seat=seat)
    cutoff = list(mine.order_by("-id").values_list("id", flat=True)[keep : keep + 1])
    if cutoff:
        mine.filter(id__lte=cutoff[0]).delete()
