from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Protocol

from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string
from pydantic import BaseModel

from core.providers.kinds import LlmKind


@dataclass(frozen=True)
class Completion:
    text: str
    input_tokens: int
    output_tokens: int
    model: str
    finish: str = "stop"  # how the answer ended: stop | length | refusal | ... as the provider said
    reasoning_tokens: int = 0  # of output_tokens, those a reasoning model spent thinking
    offline: bool = False  # the offline heuristic's answer: the floor itself, never judged


class Provider(Protocol):
    alias: str
    model: str

    def complete(
        self, messages: list[dict], *, max_tokens: int, json: bool = False, purpose: Any = None,
        inputs: BaseModel | None = None, timeout: float | None = None,
    ) -> Completion:
        """Answer ``messages``. ``purpose``/``inputs`` (the purpose's inputs model) let the offline provider
        run its heuristic; ``timeout`` (seconds) bounds this one request below the provider's own
        ``timeout_seconds``."""


KINDS: dict[LlmKind, str] = {
    "openai_compat": "core.providers.llm.openai_compat.OpenAICompatProvider",
    "anthropic": "core.providers.llm.anthropic.AnthropicProvider",
    "offline": "core.providers.llm.offline.OfflineProvider",
    "scripted": "core.providers.llm.scripted.ScriptedProvider",
}

_cache: dict[tuple, Provider] = {}
_lock = threading.Lock()


def build(alias: str, spec) -> Provider:
    """The provider for a configured alias, cached per (alias, spec)."""
    key = (alias, spec)
    with _lock:
        found = _cache.get(key)
        if found is None:
            path = KINDS.get(spec.kind)
            if path is None:
                raise ImproperlyConfigured(f"providers.llm.{alias}.kind: unknown provider kind {spec.kind!r}")
            found = _cache[key] = import_string(path)(alias=alias, spec=spec)
        return found


def reset_providers() -> None:
    with _lock:
        _cache.clear()
