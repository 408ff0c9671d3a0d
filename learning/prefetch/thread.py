"""## The thread so far: the chat thread this turn was woken in, handed over rather than left to fetch.

Not gated by the thin-trigger gate: it is the thing that makes a thin trigger thick. Bounded by
whole messages (8,000 bytes); past it the messages between the root and the newest are condensed by
the seat's auxiliary model, and left out with their count only where no rewrite can be had. The
root and the newest always survive. Unreadable, read-and-empty and too-long-to-read-to-its-end
threads render three different sentences.
"""

from __future__ import annotations

import time

from learning import limits
from learning.memory import condensation
from learning.memory.condensation import nbytes
from learning.prefetch import bounds
from learning.prefetch.blocks import BlockResult, done
from learning.prefetch.request import THREAD_TRUNCATED, THREAD_UNREADABLE, ThreadMessage
from learning.prefetch.turn_state import PrefetchContext

NAME = "thread_so_far"
HEADING = "## The thread so far"
UNREADABLE = (
    "The thread this turn was woken in could not be read, so its earlier messages are not shown here; "
    "read it yourself before you answer."
)
EMPTY = "The thread was read and holds no earlier messages."
STOPPED_SHORT = (
    "The thread is too long for the backend to read to its end: the newest messages are missing from what "
    "is shown above. Read the rest of the thread yourself before you answer."
)
EMPTY_ROOT = "(the opening message has nothing readable in it — an attachment-only post or a deleted message)"
MIDDLE_SHARE = 4  # a quarter of the bound is kept for the condensed middle when there is one


def message_line(message: ThreadMessage, *, root: bool = False) -> str:
    who = message.sender_name or message.sender_handle or "someone"
    if message.is_self:
        who = f"{who} (you)"
    text = " ".join(message.text.split())
    if not text:
        text = EMPTY_ROOT if root else "(nothing readable)"
    return f"- {who}: {text}"


def _counts(ctx: PrefetchContext, posts: int | None, read: int | None) -> dict:
    thread = ctx.request.thread
    return {
        "thread_context_posts": posts,
        "thread_context_read": read,
        "thread_context_stopped_short": thread is not None and thread.status == THREAD_TRUNCATED,
    }


def start(ctx: PrefetchContext):
    thread = ctx.request.thread
    if thread is None:
        return done(BlockResult(NAME, extra={"thread_context_posts": None, "thread_context_read": None,
                                             "thread_context_stopped_short": None}))
    if thread.status == THREAD_UNREADABLE:
        return done(BlockResult(NAME, f"{HEADING}\n{UNREADABLE}", selection_count=0, extra=_counts(ctx, 0, None)))
    if not thread.messages:
        text = STOPPED_SHORT if thread.status == THREAD_TRUNCATED else EMPTY
        return done(BlockResult(NAME, f"{HEADING}\n{text}", selection_count=0, extra=_counts(ctx, 0, 0)))
    return lambda: _finish(ctx)


def split(lines: list[str], bound: int = bounds.THREAD_BYTES) -> tuple[list[str], list[str], list[str]]:
    """(root, middle, tail): the root and the newest always kept, then as many newer as fit."""
    if sum(nbytes(line) + 1 for line in lines) <= bound or len(lines) <= 2:
        return lines, [], []
    root, newest = lines[0], lines[-1]
    room = bound - nbytes(root) - nbytes(newest) - 2 - bound // MIDDLE_SHARE
    tail = [newest]
    for line in reversed(lines[1:-1]):
        if nbytes(line) + 1 > room:
            break
        tail.insert(0, line)
        room -= nbytes(line) + 1
    middle = lines[1 : len(lines) - len(tail)]
    return [root], middle, tail


def _finish(ctx: PrefetchContext) -> BlockResult:
    thread = ctx.request.thread
    assert thread is not None  # start() finished the block already when there is no thread
    lines = [message_line(m, root=(i == 0)) for i, m in enumerate(thread.messages)]
    head, middle, tail = split(lines)
    shown = head + tail
    if middle:
        deadline = ctx.deadline or time.monotonic() + limits.EPISODE_REWRITE_TIMEOUT
        room = max(200, bounds.THREAD_BYTES - sum(nbytes(line) + 1 for line in shown) - 80)
        (condensed,) = condensation.rewrite_all(
            seat=ctx.seat, texts=["\n".join(middle)], max_bytes=room, stage="turn", turn_id=ctx.turn_id,
            kind="the middle of a chat thread, between its opening message and its newest ones", deadline=deadline,
        )
        if condensed.mode == "rewrite":
            summary = f"- [{len(middle)} messages in between, condensed] {condensed.text}"
        else:
            summary = f"- [{len(middle)} messages in between left out: no condensation could be had in time]"
        body = head + [summary] + tail
    else:
        body = head
    text = f"{HEADING}\n" + "\n".join(body)
    if thread.status == THREAD_TRUNCATED:
        text += f"\n{STOPPED_SHORT}"
    return BlockResult(NAME, text, selection_count=len(shown), extra=_counts(ctx, len(shown), len(thread.messages)))
