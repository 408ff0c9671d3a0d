"""Condensation: a text past its byte bound is rewritten by the seat's auxiliary model, never cut.

``rewrite_all`` runs at most four rewrites at once, all sharing ONE deadline
(learning.EpisodeRewriteTimeout, thirty seconds); a text no rewrite reached by then is named by
its size. Used by query_episodes and ## Similar prior work (600 bytes), compaction (280 bytes) and
the thread block's middle.
"""

from __future__ import annotations

import concurrent.futures
import logging
import re
import time
from dataclasses import dataclass

from core import aux
from core.purposes import Purpose, register, system_user
from learning import limits

log = logging.getLogger("learning.rewrites")

_pool = concurrent.futures.ThreadPoolExecutor(max_workers=limits.MAX_CONCURRENT_REWRITES, thread_name_prefix="rewrite")


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


def nbytes(text: str) -> int:
    return len(text.encode("utf-8"))


def _render(inputs: dict) -> list[dict]:
    return system_user(
        "You condense one passage from an agent's work record so it can be read at a glance. Keep every "
        "name, identifier, number, error and decision that matters; drop repetition and boilerplate. "
        f"Answer with the condensed passage only, in at most {inputs['max_bytes']} bytes, on one line.",
        f"What this passage is: {inputs.get('kind') or 'a passage'}\n\nPassage:\n{inputs['text']}",
    )


def _offline(inputs: dict) -> str:
    """Extractive: the first sentence, then the last, whitespace folded, within the byte bound."""
    text = re.sub(r"\s+", " ", inputs["text"]).strip()
    sentences = re.split(r"(?<=[.!?])\s+", text)
    picked = sentences[0] if len(sentences) == 1 else f"{sentences[0]} … {sentences[-1]}"
    budget = int(inputs["max_bytes"])
    if nbytes(picked) > budget:
        words, out = picked.split(), ""
        for word in words:
            candidate = f"{out} {word}".strip()
            if nbytes(candidate) + 2 > budget:
                break
            out = candidate
        picked = out + " …"
    return picked


def _parse(text: str) -> str:
    cleaned = " ".join(text.split())
    if not cleaned:
        from core.purposes import AnswerUnparseable

        raise AnswerUnparseable("condense", "empty answer", text)
    return cleaned


CONDENSE = register(Purpose(name="condense", render=_render, parse=_parse, offline=_offline, max_tokens=300))


def rewrite_all(
    *,
    seat,
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
    futures = {}
    for i, text in enumerate(texts):
        if nbytes(text) <= max_bytes:
            out[i] = Rewritten(text, "whole", nbytes(text))
        elif not aux.available(seat):
            out[i] = Rewritten("", "size", nbytes(text))
        else:
            inputs = {"text": text, "max_bytes": max_bytes, "kind": kind}
            futures[_pool.submit(_one, seat, stage, turn_id, inputs)] = i
    remaining = max(0.0, deadline - time.monotonic())
    done, _late = concurrent.futures.wait(futures, timeout=remaining)
    for future, i in futures.items():
        original = nbytes(texts[i])
        if future in done and future.exception() is None:
            result = future.result()
            result.record()
            out[i] = Rewritten(result.value, "rewrite", original)
        else:
            if future in done:
                log.warning("rewrite failed: %s", future.exception())
            out[i] = Rewritten("", "size", original)
    return [r for r in out if r is not None]


def _one(seat, stage, turn_id, inputs):
    return aux.call(seat=seat, stage=stage, purpose="condense", turn_id=turn_id, inputs=inputs, defer_record=True)
