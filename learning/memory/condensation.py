"""Condensation: a text past its byte bound is rewritten by the seat's auxiliary model, never cut.

A rewrite is held to the bound by code, not trusted to the prompt: one over it is asked again once,
told its size; one still over is named by its size like a rewrite that never came.

``rewrite_all`` runs at most four rewrites at once on workers of its own (one answer's rewrites
never wait behind another answer's), all sharing ONE deadline (learning.EpisodeRewriteTimeout,
thirty seconds); a text no rewrite reached by then is named by its size. A rewrite not started by
the deadline is never sent; one still running is left to finish and charged when it returns
(``core.late_spend``), and does not send its retry. Used by query_episodes and ## Similar prior
work (600 bytes), compaction (280 bytes) and the thread block's middle.
"""

from __future__ import annotations

import concurrent.futures
import logging
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast

from core import auxiliary, late_spend
from core.purposes import AnswerUnparseable
from learning import limits
from learning.purposes.condense import NAME as CONDENSE
from learning.purposes.condense import Inputs, nbytes

if TYPE_CHECKING:
    from crewlet.models import Seat

log = logging.getLogger("learning.memory.condensation")

@dataclass(frozen=True)
class Rewritten:
    text: str
    mode: str  # whole | rewrite | size
    original_bytes: int

    def render(self) -> str:
        if self.mode == "rewrite":
            return f"{self.text} (condensed)"
        if self.mode == "size":
            return f"[{self.original_bytes} bytes; no rewrite could be had in time]"
        return self.text


def rewrite_all(
    *,
    seat: Seat,
    texts: list[str],
    max_bytes: int,
    stage: str,
    turn_id: str = "",
    kind: str = "",
    deadline: float | None = None,
    timeout: float = limits.EPISODE_REWRITE_TIMEOUT,
) -> list[Rewritten]:
    """Each text whole when within ``max_bytes``; else condensed, four at a time, one shared deadline."""
    deadline = deadline if deadline is not None else time.monotonic() + timeout
    out: list[Rewritten | None] = [None] * len(texts)
    asked: dict[int, Inputs] = {}
    for i, text in enumerate(texts):
        if nbytes(text) <= max_bytes:
            out[i] = Rewritten(text, "whole", nbytes(text))
        elif not auxiliary.available(seat):
            out[i] = Rewritten("", "size", nbytes(text))
        else:
            asked[i] = Inputs(text=text, max_bytes=max_bytes, kind=kind)
    if asked:
        # this answer's own workers, at most MAX_CONCURRENT_REWRITES of them
        workers = concurrent.futures.ThreadPoolExecutor(
            max_workers=min(limits.MAX_CONCURRENT_REWRITES, len(asked)), thread_name_prefix="rewrite"
        )
        futures = {workers.submit(_one, seat, stage, turn_id, inputs, deadline): i for i, inputs in asked.items()}
        workers.shutdown(wait=False)  # the workers exit once their last rewrite returns
        done, _late = concurrent.futures.wait(futures, timeout=max(0.0, deadline - time.monotonic()))
        for future, i in futures.items():
            out[i] = _settle(future, future in done, nbytes(texts[i]))
    return [r for r in out if r is not None]


def _settle(future: concurrent.futures.Future, in_time: bool, original: int) -> Rewritten:
    """The rewrite, or the text named by its size; a late one is cancelled or charged when it returns."""
    if not in_time:
        late_spend.abandon(future)
        return Rewritten("", "size", original)
    error = future.exception()
    if error is None:
        result = future.result()
        result.record()
        return Rewritten(result.value, "rewrite", original)
    log.warning("rewrite failed: %s", error)
    getattr(error, "record", lambda: None)()  # failed attempts are charged too
    return Rewritten("", "size", original)


def _one(seat: Seat, stage, turn_id, inputs: Inputs, deadline: float):
    """One condensation held to its byte bound: asked again once, told its size, when over it and
    while the deadline has not passed (past it, nobody would read the retry's answer)."""
    # no offline floor: a text no model condensed in time is named by its size here
    first = auxiliary.call(seat=seat, stage=stage, purpose=CONDENSE, turn_id=turn_id, inputs=inputs, defer_record=True,
                     offline_floor=False)
    if nbytes(first.value) <= inputs.max_bytes:
        return first
    if time.monotonic() >= deadline:
        late = AnswerUnparseable(
            CONDENSE, f"{nbytes(first.value)} bytes, over the {inputs.max_bytes}-byte bound at the deadline", first.text
        )
        cast(Any, late).record = first.record
        raise late
    retry = inputs.model_copy(update={"previous_bytes": nbytes(first.value)})
    try:
        second = auxiliary.call(seat=seat, stage=stage, purpose=CONDENSE, turn_id=turn_id, inputs=retry, defer_record=True,
                          offline_floor=False)
    except Exception as exc:
        cast(Any, exc).record = _both(first.record, getattr(exc, "record", lambda: None))  # carries both spends
        raise
    if nbytes(second.value) <= inputs.max_bytes:
        return replace(second, record=_both(first.record, second.record))
    over = AnswerUnparseable(
        CONDENSE, f"{nbytes(second.value)} bytes, over the {inputs.max_bytes}-byte bound after one retry", second.text
    )
    cast(Any, over).record = _both(first.record, second.record)  # a deferred record, as the seam attaches one
    raise over


def _both(*records):
    def record():
        for one in records:
            one()

    return record
