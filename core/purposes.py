"""Purposes: every auxiliary decision is one object, and the project's purposes are ONE list.

A purpose owns its prompt (``render(inputs) -> messages``), the shape of the answer it parses
(``parse(text)``, raising ``AnswerUnparseable`` with a clear reason), and its ``offline``
heuristic, which returns the text a model would have answered. JSON purposes read their answer
with ``read_json``: the one extraction (``core.answers``), then the purpose's pydantic ``answer``
model, field by field.

The list lives in the module ``settings.CREWLET_PURPOSES`` names (``learning.purposes.PURPOSES``)
and is loaded by the first lookup, so no caller has to import a purpose's module first; an unknown
name is an ``UnknownPurpose`` naming it. ``register`` adds a purpose beside the list: for tests'
stand-ins only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from core import answers

M = TypeVar("M", bound=BaseModel)


class AnswerUnparseable(ValueError):
    # what the seam knows of the call when it raises this: the alias, the tokens, how the answer ended
    provider: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    finish: str = ""
    attempts: tuple = ()

    def __init__(self, purpose: str, reason: str, text: str = ""):
        self.purpose, self.reason, self.text = purpose, reason, text
        super().__init__(f"{purpose}: unparseable answer ({reason})")


class UnknownPurpose(KeyError):
    def __init__(self, name: str, known: list[str]):
        self.name = name
        super().__init__(f"no purpose named {name!r} (known: {', '.join(sorted(known))})")

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Purpose:
    name: str
    render: Callable[[dict], list[dict]]
    parse: Callable[[str], Any]
    offline: Callable[[dict], str]
    max_tokens: int = 512
    json: bool = False
    answer: type[BaseModel] | None = None  # the pydantic model a JSON answer is validated against

    def __hash__(self):
        return hash(self.name)


_REGISTRY: dict[str, Purpose] = {}
_EXTRA: dict[str, Purpose] = {}
_lock = threading.Lock()


def _listed() -> dict[str, Purpose]:
    with _lock:
        if not _REGISTRY:
            from django.conf import settings
            from django.utils.module_loading import import_string

            found: dict[str, Purpose] = {}
            for purpose in import_string(settings.CREWLET_PURPOSES):
                if purpose.name in found:
                    raise ValueError(f"purpose {purpose.name!r} is listed twice in {settings.CREWLET_PURPOSES}")
                found[purpose.name] = purpose
            _REGISTRY.update(found)
        return _REGISTRY


def register(purpose: Purpose) -> Purpose:
    """A purpose beside the list (a test's stand-in); a name the list already holds is refused."""
    existing = _EXTRA.get(purpose.name)
    if existing is not None and existing is not purpose:
        raise ValueError(f"purpose {purpose.name!r} is registered twice")
    _EXTRA[purpose.name] = purpose
    return purpose


def get(name: str) -> Purpose:
    listed = _listed()
    found = listed.get(name) or _EXTRA.get(name)
    if found is None:
        raise UnknownPurpose(name, list(listed))
    return found


def all_purposes() -> dict[str, Purpose]:
    """The project's purposes, by name, in the list's order."""
    return dict(_listed())


def read_json(purpose: str, text: str, model: type[M]) -> M:
    """The answer's first JSON object validated against ``model``; raises ``AnswerUnparseable``."""
    value = parse_json_object(purpose, text)
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the answer"
        raise AnswerUnparseable(purpose, f"{where}: {first['msg']}", text) from None


def parse_json_object(purpose: str, text: str) -> dict:
    """The answer's first balanced JSON object, keys lower-cased (``core.answers.json_object``)."""
    try:
        return answers.json_object(text)
    except answers.NoObject as exc:
        reason = "an empty answer" if not answers.without_thinking(text) else str(exc)
        raise AnswerUnparseable(purpose, reason, text) from None


def says_nothing(text: str, words: frozenset[str] = answers.NOTHING_WORDS) -> bool:
    return answers.says_nothing(text, words)


def system_user(system: str, user: str) -> list[dict]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]
