"""Fitting a prompt into a model's context window (``context_tokens`` in the provider's config).

Some local servers silently drop the start of a prompt that does not fit, so the seam cuts it
itself, visibly: the longest message loses its middle, marked by how much was cut. Tokens are
estimated at three characters each, an over-count for English so that the estimate errs short.
"""

from __future__ import annotations

import math

CHARS_PER_TOKEN = 3
MARGIN_TOKENS = 64  # the chat template's own tokens around each message
DEFAULT_CONTEXT_TOKENS = 4096


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def fit(messages: list[dict], *, context_tokens: int, reserved: int) -> list[dict]:
    """``messages`` unchanged when they fit beside ``reserved`` answer tokens; else the longest one cut."""
    room = (context_tokens or DEFAULT_CONTEXT_TOKENS) - reserved - MARGIN_TOKENS * len(messages)
    used = sum(estimate_tokens(str(m.get("content", ""))) for m in messages)
    if used <= room:
        return messages
    longest = max(range(len(messages)), key=lambda i: len(str(messages[i].get("content", ""))))
    content = str(messages[longest].get("content", ""))
    over_chars = (used - max(room, 0)) * CHARS_PER_TOKEN
    keep = max(0, len(content) - over_chars - 80)
    head, tail = content[: keep * 2 // 3], content[len(content) - keep // 3 :] if keep // 3 else ""
    cut = len(content) - len(head) - len(tail)
    shortened = f"{head}\n[… {cut} characters cut to fit the model's context window …]\n{tail}"
    return [*messages[:longest], {**messages[longest], "content": shortened}, *messages[longest + 1 :]]
