"""## Similar prior work: the top 3 raw turns by similarity to the ask, or a briefing of them.

With ``learning.summarize_episodes`` on, the auxiliary model reads each ask and account whole (up
to about 11 KB, past which it is condensed first) and its briefing replaces the bullets; a summary
that does not answer falls back to the bullets, which get what is left of the SAME deadline.
"""

from __future__ import annotations

import logging

from django.db import DatabaseError

from core import auxiliary
from crewlet import config
from learning.memory import condensation, episodes
from learning.prefetch import bounds, hints, past_turns
from learning.prefetch.blocks import BlockResult, done
from learning.prefetch.turn_state import AuxDidNotAnswer, PrefetchContext
from learning.purposes import episode_summary

log = logging.getLogger("learning.prefetch")

NAME = "similar_prior_work"
HEADING = "## Similar prior work"

# what the recall found, as prefetch_summary's ``similar_prior_work_recall`` reports it (with a short
# label): an empty block is told apart from one with nothing to say, and turns shown from turns too far
# from the ask to show
RECALL_OUTCOMES = {
    "shown": "turns shown",
    "close_call": "shown, a close call",  # the best turns scored about alike
    "unlike": "nothing like the ask",  # turns matched, none like the ask (likeness.unlike): none shown
    "none": "no past turn matched",
    "not_searched": "no vector to search",  # turn_embedding says why
    "gated": "thin trigger: gated",
    "failed": "the search failed",
}


def start(ctx: PrefetchContext):
    """The recall runs when the block is finished, after the database-only blocks have read theirs."""
    if ctx.thin:  # the only way to know whether there are matching episodes is the query the gate skips
        return done(BlockResult(NAME, f"{HEADING}\n{hints.EmptyRecallHint}", selection_count=0,
                                extra={"recall": "gated"}))
    return lambda: _finish_recalled(ctx)


def _recall(ctx: PrefetchContext) -> episodes.Recalled:
    embedded = ctx.turn_vector()
    if embedded.vector is None:
        return episodes.Recalled([])
    return episodes.recall(seat=ctx.seat, vector=embedded.vector, model=embedded.model, query=ctx.request.ask,
                           limit=bounds.SIMILAR_WORK_HITS, ranked_words=ctx.ranked_words("episodes"))


def _finish_recalled(ctx: PrefetchContext) -> BlockResult:
    try:
        hits, close_call, unlike = _recall(ctx)
    except DatabaseError:
        log.warning("episode recall failed for %s", ctx.seat.handle, exc_info=True)
        return BlockResult(NAME, selection_count=0, extra={"recall": "failed"})
    if not hits or unlike:  # turns none of which is like the ask are not similar work: the block stays out
        found = "unlike" if hits else "none" if ctx.turn_embedding == "embedded" else "not_searched"
        return BlockResult(NAME, selection_count=0, extra={"recall": found})
    knobs = config.knobs_for_seat(ctx.seat).learning
    summary = None
    if knobs.summarize_episodes and auxiliary.available(ctx.seat) and not _needs_condensing(hits):
        summary = ctx.submit(episode_summary.NAME, _summary_inputs(ctx, hits), max_tokens=knobs.summarize_max_tokens)
    return _finish(ctx, hits, summary, knobs, close_call)


def _needs_condensing(hits) -> bool:
    limit = bounds.EPISODE_SUMMARY_TEXT_BYTES
    return any(condensation.nbytes(h.ask) > limit or condensation.nbytes(h.plan_summary) > limit for h in hits)


def _summary_inputs(ctx: PrefetchContext, hits, texts: list[str] | None = None) -> episode_summary.Inputs:
    texts = texts or [t for h in hits for t in (h.ask, h.plan_summary)]
    turns = []
    for i, h in enumerate(hits):
        turns.append(
            {
                "when": h.ended_at.date().isoformat() if h.ended_at else "undated",
                "outcome": h.review_outcome,
                "tools": list(h.tool_sequence or []),
                "woken_by": h.task_summary,
                "asked": texts[2 * i],
                "what_it_did": texts[2 * i + 1],
            }
        )
    return episode_summary.Inputs(ask=ctx.request.ask, turns=turns)


def _condensed_summary(ctx: PrefetchContext, hits, knobs):
    """The summary's texts past about 11 KB are condensed first, under the block's one deadline."""
    texts = [t for h in hits for t in (h.ask, h.plan_summary)]
    out = condensation.rewrite_all(
        seat=ctx.seat,
        texts=texts,
        max_bytes=bounds.EPISODE_SUMMARY_TEXT_BYTES,
        stage="turn",
        turn_id=ctx.turn_id,
        kind="what an agent was asked, or its account of what it did",
        deadline=ctx.deadline,
    )
    inputs = _summary_inputs(ctx, hits, [r.render() for r in out])
    return ctx.submit(episode_summary.NAME, inputs, max_tokens=knobs.summarize_max_tokens)


def _finish(ctx: PrefetchContext, hits, summary, knobs, close_call: bool = False) -> BlockResult:
    # a close call is said after the turns, whether the bullets or a briefing show them
    after = "\n" + hints.close_call("These past turns", "the message") if close_call else ""
    found = {"recall": "close_call" if close_call else "shown"}
    if summary is None and knobs.summarize_episodes and auxiliary.available(ctx.seat):
        summary = _condensed_summary(ctx, hits, knobs)
    if summary is not None:
        try:
            briefing = ctx.collect(summary)
            ids = ", ".join(h.run_id for h in hits if h.run_id)
            tail = f"\n(turns: {ids}; query_episodes reads them in full)" if ids else ""
            return BlockResult(NAME, f"{HEADING}\n{briefing}{tail}{after}", selection_count=len(hits),
                               extra=found, shown={"episodes": [h.id for h in hits]})
        except AuxDidNotAnswer:
            pass  # the bullets get what is left of the same deadline
    rendered = past_turns.render(
        seat=ctx.seat, episodes=hits, turn_id=ctx.turn_id, labels=past_turns.BLOCK_LABELS, deadline=ctx.deadline
    )
    body = "\n".join(turn.text for turn in rendered)
    return BlockResult(NAME, f"{HEADING}\nYour most similar past turns, most similar first:\n{body}{after}",
                       selection_count=len(hits), extra=found, shown={"episodes": [h.id for h in hits]})
