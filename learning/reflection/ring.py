"""The duplicate gate's bounded ring of recently reflected RUN ids (per process, deliberately not durable).

Run ids, not work keys: a redelivered trigger genuinely runs again, and its reflection is a second
pass over a second execution. Past the bound the oldest id is evicted: a redelivery that late is far
outside any backend's redelivery window.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

RING_SIZE = 4096


class RunRing:
    def __init__(self, size: int = RING_SIZE):
        self.size = size
        self._ids: OrderedDict[tuple[int, str], None] = OrderedDict()
        self._lock = threading.Lock()

    def seen(self, key: tuple[int, str]) -> bool:
        """True when ``key`` (seat id, run id: run ids are unique per seat) was already taken; otherwise
        take it (atomically) and return False."""
        with self._lock:
            if key in self._ids:
                return True
            self._ids[key] = None
            while len(self._ids) > self.size:
                self._ids.popitem(last=False)
            return False

    def forget(self, key: tuple[int, str]) -> None:
        with self._lock:
            self._ids.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._ids.clear()

    def __len__(self) -> int:
        return len(self._ids)


RING = RunRing()
