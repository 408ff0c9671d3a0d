"""A provider that replays queued answers (tests). Unqueued purposes fall back to offline."""

from __future__ import annotations

import threading
from collections import defaultdict, deque

from core.providers.errors import ProviderError
from core.providers.llm.base import Completion


class ScriptedProvider:
    """Queue answers per purpose name (or ``"*"``); an answer may be a ``ProviderError`` to raise."""

    _queues: dict[str, deque] = defaultdict(deque)
    calls: list[dict] = []
    _lock = threading.Lock()

    def __init__(self, *, alias: str, spec):
        self.alias, self.model = alias, spec.model or "scripted"

    @classmethod
    def queue(cls, purpose: str, *answers) -> None:
        with cls._lock:
            cls._queues[purpose].extend(answers)

    @classmethod
    def reset(cls) -> None:
        with cls._lock:
            cls._queues.clear()
            cls.calls.clear()

    def complete(self, messages, *, max_tokens, json=False, purpose=None, inputs=None, timeout=None):
        name = getattr(purpose, "name", "") or ""
        with self._lock:
            self.calls.append({"purpose": name, "messages": messages, "inputs": inputs})
            queue = self._queues.get(name) or self._queues.get("*")
            answer = queue.popleft() if queue else None
        if answer is None:
            from core.providers.llm.offline import OfflineProvider

            return OfflineProvider(alias=self.alias, spec=None).complete(
                messages, max_tokens=max_tokens, json=json, purpose=purpose, inputs=inputs
            )
        if isinstance(answer, ProviderError):
            raise answer
        text = str(answer)
        return Completion(text=text, input_tokens=_count(messages), output_tokens=len(text.split()), model=self.model)


def _count(messages) -> int:
    return sum(len(str(m.get("content", "")).split()) for m in messages)
