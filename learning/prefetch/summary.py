"""``prefetch_summary``: one event per turn start, the only signal that tells an unreachable store
from one with nothing to say.

Per block ``hit`` and ``bytes``; the knowledge ``selection_count``; the chat thread's counts; the
gate's ``trigger_requires_recon``; ``turn_embedding``; ``model_fallbacks`` (each purpose answered offline and why); what the similar-work recall found
(``similar_prior_work_recall``: an empty block with nothing like the ask is not an empty store);
and the line ``prefetch: N/M hits`` whose denominator is the length of the block list, never a
literal.
"""

from __future__ import annotations

from learning.events import BlockOutcome, PrefetchSummary
from learning.prefetch.blocks import BlockResult
from learning.prefetch.gate import requires_recon
from learning.prefetch.turn_state import PrefetchContext

THREAD_COUNTS = ("thread_context_posts", "thread_context_read", "thread_context_stopped_short")


def summary_line(hits: int, total: int, *, thin: bool, fallbacks: dict[str, str] | None = None) -> str:
    line = f"prefetch: {hits}/{total} hits"
    if thin:
        line = f"{line} (thin trigger: relevance filters gated)"
    if fallbacks:  # a purpose answered offline: past the model's deadline, over budget, or no usable answer
        line += " (offline: " + ", ".join(f"{purpose} {why}" for purpose, why in sorted(fallbacks.items())) + ")"
    return line


def build(ctx: PrefetchContext, results: list[BlockResult]) -> PrefetchSummary:
    by_name = {r.name: r for r in results}
    hits = sum(1 for r in results if r.hit)
    knowledge = by_name.get("relevant_knowledge")
    thread = by_name.get("thread_so_far")
    similar = by_name.get("similar_prior_work")
    return PrefetchSummary(
        blocks={r.name: BlockOutcome(hit=r.hit, bytes=r.bytes) for r in results},
        trigger_requires_recon=requires_recon(ctx.request),
        thin_trigger=ctx.thin,
        turn_embedding=ctx.turn_embedding,
        hits=hits,
        block_count=len(results),
        summary=summary_line(hits, len(results), thin=ctx.thin, fallbacks=ctx.fallbacks),
        model_fallbacks=dict(ctx.fallbacks),
        relevant_knowledge_selection_count=knowledge.selection_count if knowledge else None,
        similar_prior_work_recall=similar.extra.get("recall") if similar else None,
        **{key: thread.extra.get(key) if thread else None for key in THREAD_COUNTS},
    )


def publish(ctx: PrefetchContext, summary: PrefetchSummary) -> None:
    """Best effort, with the turn start's other events (a failed telemetry write never fails the turn)."""
    ctx.announce(summary)
