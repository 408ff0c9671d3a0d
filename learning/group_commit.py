"""Group commit: the items this process's threads have waiting are written in one call, so they share
one transaction and one commit (one fsync of SQLite's log at ``synchronous=FULL``, one WAL flush on
PostgreSQL) instead of queueing for a commit each.

A thread that submits while nothing is being written writes its own item at once: alone, it waits for
nobody and no timer delays it. The threads that submit while a batch is being written wait; when it
is done, the first of them writes every item waiting by then, its own included. Each thread gets back
its own item's outcome, or the exception its item raised, and returns only once its item's write has
returned (for a database write: committed or rolled back).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

MAX_BATCH = 64  # items one write takes at most (the rest wait for the next)


class _Slot(Generic[T]):
    __slots__ = ("item", "done", "outcome", "wake")

    def __init__(self, item: T):
        self.item = item
        self.done = False
        self.outcome: object = None
        self.wake = threading.Event()  # set once: its outcome is in, or its thread writes next


class GroupCommit(Generic[T, R]):
    """Calls ``write(items)`` for the items concurrent threads submit; ``write`` answers one outcome per
    item, in order: the item's result, or the exception to raise in the item's thread.

    A finished write wakes only its own items' threads and, when items wait, the first of them to
    write the next batch (never every waiting thread).
    """

    def __init__(self, write: Callable[[list[T]], Sequence[R | BaseException]], *, max_batch: int = MAX_BATCH):
        self._write = write
        self._max = max_batch
        self._lock = threading.Lock()
        self._waiting: list[_Slot[T]] = []
        self._writing = False  # a thread writes (or has been woken to write next)

    def waiting(self) -> int:
        """Items submitted and not yet taken by a write."""
        with self._lock:
            return len(self._waiting)

    def submit(self, item: T) -> R:
        slot = _Slot(item)
        with self._lock:
            self._waiting.append(slot)
            writes_now, self._writing = not self._writing, True
        if not writes_now:
            slot.wake.wait()
        if not slot.done:  # this thread writes its item and what waits with it
            with self._lock:
                self._waiting.remove(slot)
                rest = self._max - 1
                batch, self._waiting = [slot, *self._waiting[:rest]], self._waiting[rest:]
            self._write_batch(batch)
        if isinstance(slot.outcome, BaseException):
            raise slot.outcome
        return slot.outcome  # type: ignore[return-value]

    def _write_batch(self, batch: list[_Slot[T]]) -> None:
        try:
            outcomes: Sequence[object] = self._write([s.item for s in batch])
            if len(outcomes) != len(batch):
                raise RuntimeError(f"a group write answered {len(outcomes)} outcomes for {len(batch)} items")
        except BaseException as exc:  # the write itself failed: every item it held fails with it
            outcomes = [exc] * len(batch)
        for s, outcome in zip(batch, outcomes, strict=True):
            s.outcome, s.done = outcome, True
        with self._lock:
            after = self._waiting[0] if self._waiting else None
            self._writing = after is not None  # handed to the next writer, or free
        for s in batch[1:]:
            s.wake.set()
        if after is not None:
            after.wake.set()
