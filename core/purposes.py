"""Purposes: every auxiliary decision is one registered object.

A purpose owns its prompt (``render(inputs) -> messages``), the shape of the answer it parses
(``parse(text)``, raising ``AnswerUnparseable`` with a clear reason), and its ``offline``
heuristic, which returns the text a model would have answered. Modules that define purposes
register them at import; ``get(name)`` finds one.
"""

from __future__ import annotations

import json as _json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class AnswerUnparseable(ValueError):
    def __init__(self, purpose: str, reason: str, text: str = ""):
        self.purpose, self.reason, self.text = purpose, reason, text
        super().__init__(f"{purpose}: unparseable answer ({reason})")


@dataclass(frozen=True)
class Purpose:
    name: str
    render: Callable[[dict], list[dict]]
    parse: Callable[[str], Any]
    offline: Callable[[dict], str]
    max_tokens: int = 512
    json: bool = False

    def __hash__(self):
        return hash(self.name)


_REGISTRY: dict[str, Purpose] = {}


def register(purpose: Purpose) -> Purpose:
    existing = _REGISTRY.get(purpose.name)
    if existing is not None and existing is not purpose:
        raise ValueError(f"purpose {purpose.name!r} is registered twice")
    _REGISTRY[purpose.name] = purpose
    return purpose


def get(name: str) -> Purpose:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"no purpose named {name!r}") from None


def all_purposes() -> dict[str, Purpose]:
    return dict(_REGISTRY)


def parse_json_object(purpose: str, text: str) -> dict:
    """Parse a JSON object answer, tolerating a fenced code block around it."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`")
        body = body.split("\n", 1)[1] if "\n" in body else body
        body = body.rsplit("```", 1)[0]
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end < start:
        raise AnswerUnparseable(purpose, "no JSON object in the answer", text)
    try:
        value = _json.loads(body[start : end + 1])
    except ValueError as exc:
        raise AnswerUnparseable(purpose, f"invalid JSON ({exc})", text) from None
    if not isinstance(value, dict):
        raise AnswerUnparseable(purpose, "the answer is not a JSON object", text)
    return value


def system_user(system: str, user: str) -> list[dict]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]
