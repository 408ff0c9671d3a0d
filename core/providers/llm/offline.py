"""The offline provider: each Purpose's documented deterministic heuristic, no key, no network.

It answers in the same text shape a real model would, so every purpose's parser runs on its
answer exactly as it would on a real one. Token counts are word counts (a stated estimate).
"""

from __future__ import annotations

from core.providers.errors import ConfigurationError
from core.providers.llm.base import Completion


class OfflineProvider:
    def __init__(self, *, alias: str, spec):
        self.alias = alias
        self.model = "offline-heuristics"

    def complete(self, messages, *, max_tokens, json=False, purpose=None, inputs=None, timeout=None):
        if purpose is None or getattr(purpose, "offline", None) is None:
            raise ConfigurationError("the offline provider answers registered purposes only")
        text = purpose.offline(purpose.read_inputs(inputs))
        used = sum(len(str(m.get("content", "")).split()) for m in messages)
        return Completion(text=text, input_tokens=used, output_tokens=len(text.split()), model=self.model, offline=True)
