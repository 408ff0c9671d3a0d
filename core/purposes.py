"""Purposes: every auxiliary decision is one object, and the project's purposes are ONE list.

A purpose owns the pydantic model of its inputs (``inputs``: a field for each key a caller gives,
an unknown key refused), its prompt (``render(inputs) -> messages``), the shape of the answer it
parses (``parse(text)``: its output model, or a plain text or list; raising ``AnswerUnparseable``
with a clear reason), and its ``offline`` heuristic, which returns the text a model would have
answered. ``render``, ``offline`` and ``check`` take the inputs model; ``read_inputs`` turns a
caller's dict into it once, and inputs it refuses are ``InvalidInputs`` naming the purpose and the
field. JSON purposes read their answer with ``read_json``: the one extraction (``core.answers``),
then the purpose's pydantic ``answer`` model, field by field.

An answer that parses is then judged for meaning (``judge``): none of its texts may be a blank of
the prompt's own JSON template, an echo of an input the purpose names (``echo_of``: the label, the
ask, the episode shown), or fail the purpose's own ``check`` (required fields, values the input
cannot support). A judged-out answer is ``AnswerRejected``, an ``AnswerUnparseable`` with its reason.

The list lives in the module ``settings.CREWLET_PURPOSES`` names (``learning.purposes.PURPOSES``)
and is loaded by the first lookup, so no caller has to import a purpose's module first; an unknown
name is an ``UnknownPurpose`` naming it. ``register`` adds a purpose beside the list: for tests'
stand-ins only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from core import answers

M = TypeVar("M", bound=BaseModel)
InputsT = TypeVar("InputsT", bound=BaseModel)  # a purpose's inputs model
OutputT = TypeVar("OutputT")  # what a purpose's ``parse`` returns: a model, or a plain text or list


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


class AnswerRejected(AnswerUnparseable):
    """An answer of the right shape that says nothing the input supports (a template's blank, an echo)."""

    def __init__(self, purpose: str, reason: str, text: str = ""):
        super().__init__(purpose, reason, text)
        self.args = (f"{purpose}: answer rejected ({reason})",)


class InvalidInputs(TypeError):
    """A caller's inputs that the purpose's inputs model refuses: a programming error, never a model's."""

    def __init__(self, purpose: str, problems: list[str]):
        self.purpose, self.problems = purpose, problems
        super().__init__(f"{purpose}: invalid inputs ({'; '.join(problems)})")


class UnknownPurpose(KeyError):
    def __init__(self, name: str, known: list[str]):
        self.name = name
        super().__init__(f"no purpose named {name!r} (known: {', '.join(sorted(known))})")

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Purpose(Generic[InputsT, OutputT]):
    name: str
    inputs: type[InputsT]  # the pydantic model of what a caller gives (``read_inputs``)
    render: Callable[[InputsT], list[dict]]
    parse: Callable[[str], OutputT]
    offline: Callable[[InputsT], str]
    max_tokens: int = 512
    json: bool = False
    answer: type[BaseModel] | None = None  # the pydantic model a JSON answer is validated against
    # the inputs' fields whose texts an answer may not give back as its own (``judge``)
    echo_of: tuple[str, ...] = ()
    # ``check(value, inputs) -> reason``: what the purpose itself refuses in a parsed answer ("" accepts)
    check: Callable[[OutputT, InputsT], str] | None = None

    def __post_init__(self):
        unknown = [key for key in self.echo_of if key not in self.inputs.model_fields]
        if unknown:
            raise ValueError(f"purpose {self.name!r}: echo_of names {unknown}, "
                             f"not fields of {_named(self.inputs)}")

    def __hash__(self):
        return hash(self.name)

    def read_inputs(self, inputs: BaseModel | dict | None) -> InputsT:
        """``inputs`` as this purpose's model: an instance of it as it is, a dict (None: an empty one)
        validated once. What the model refuses (a misspelt, missing or mistyped key, another
        purpose's model) raises ``InvalidInputs`` naming each field."""
        if isinstance(inputs, self.inputs):
            return inputs
        if isinstance(inputs, BaseModel):
            raise InvalidInputs(self.name, [f"{_named(type(inputs))} is not {_named(self.inputs)}"])
        try:
            return self.inputs.model_validate(inputs or {})
        except ValidationError as exc:
            problems = [f"{'.'.join(str(p) for p in e['loc']) or 'inputs'}: {e['msg']}" for e in exc.errors()]
            raise InvalidInputs(self.name, problems) from None


def _named(model: type) -> str:
    return f"{model.__module__}.{model.__qualname__}"


_REGISTRY: dict[str, Purpose[Any, Any]] = {}
_EXTRA: dict[str, Purpose[Any, Any]] = {}
_lock = threading.Lock()


def _listed() -> dict[str, Purpose[Any, Any]]:
    with _lock:
        if not _REGISTRY:
            from django.conf import settings
            from django.utils.module_loading import import_string

            found: dict[str, Purpose[Any, Any]] = {}
            for purpose in import_string(settings.CREWLET_PURPOSES):
                if purpose.name in found:
                    raise ValueError(f"purpose {purpose.name!r} is listed twice in {settings.CREWLET_PURPOSES}")
                found[purpose.name] = purpose
            _REGISTRY.update(found)
        return _REGISTRY


def register(purpose: Purpose[InputsT, OutputT]) -> Purpose[InputsT, OutputT]:
    """A purpose beside the list (a test's stand-in); a name the list already holds is refused."""
    existing = _EXTRA.get(purpose.name)
    if existing is not None and existing is not purpose:
        raise ValueError(f"purpose {purpose.name!r} is registered twice")
    _EXTRA[purpose.name] = purpose
    return purpose


def get(name: str) -> Purpose[Any, Any]:
    listed = _listed()
    found = listed.get(name) or _EXTRA.get(name)
    if found is None:
        raise UnknownPurpose(name, list(listed))
    return found


def all_purposes() -> dict[str, Purpose[Any, Any]]:
    """The project's purposes, by name, in the list's order."""
    return dict(_listed())


def judge(purpose: Purpose[InputsT, OutputT], value: OutputT, inputs: InputsT, messages: list[dict]) -> str:
    """Why a parsed answer says nothing the input supports ("" when it may be used).

    Every text of the answer (a model read as its dict) is held against the blanks of the prompt's
    own JSON template (``answers.template_blanks``) and against the inputs' fields
    ``purpose.echo_of`` names, given back whole; then the purpose's own ``check`` runs.
    """
    blanks = answers.template_blanks(messages)
    echoes: dict[str, str] = {}
    for key in purpose.echo_of:
        for _where, text in answers.string_leaves(_plain(getattr(inputs, key))):
            norm = answers.normalised(text)
            if len(norm) >= 3:
                echoes.setdefault(norm, key)
    for where, text in answers.string_leaves(_plain(value)):
        blank = answers.blank_in(text, blanks)
        if blank:
            return f"{where} is the prompt's template text {blank!r}"
        echoed = echoes.get(answers.normalised(text))
        if echoed:
            return f"{where} repeats the input's {echoed} {text.strip()[:60]!r}"
    return purpose.check(value, inputs) if purpose.check is not None else ""


def _plain(value: Any) -> Any:
    """A value with any model in it as its dict (``answers.string_leaves`` walks dicts and lists): an
    input's field, or a parsed answer."""
    if isinstance(value, BaseModel):
        return value.model_dump()
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def read_json(purpose: str, text: str, model: type[M]) -> M:
    """The answer's first JSON object validated against ``model``; raises ``AnswerUnparseable``.

    An object naming none of the model's fields (``{}``, or the input given back) is refused: with
    every field at its default it would read as "nothing to do" whatever the model meant.
    """
    value = parse_json_object(purpose, text)
    asked = _field_names(model)
    if not asked & set(value):
        shown = ", ".join(sorted(value)[:5]) or "no keys"
        raise AnswerUnparseable(purpose, f"the object names none of the fields asked for ({shown})", text)
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the answer"
        raise AnswerUnparseable(purpose, f"{where}: {first['msg']}", text) from None


def _field_names(model: type[BaseModel]) -> set[str]:
    names = set(model.model_fields)
    for field in model.model_fields.values():
        alias = field.validation_alias
        choices = getattr(alias, "choices", None)
        if choices:
            names.update(c for c in choices if isinstance(c, str))
        elif isinstance(alias, str):
            names.add(alias)
    return names


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
