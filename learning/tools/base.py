"""What a builtin is: a name, a one-line when-to-use description, an argument schema and a handler.

Descriptions carry the guardrails (layer 3 of the spec's four): they say when to call the tool,
not how it works. Argument schemas are pydantic models, so one definition serves validation here
and the JSON schema a function-calling model is handed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from core.scrub import scrub_json
from crewlet.errors import BadInput
from learning.intake.record import Text  # noqa: F401  (re-exported: the argument schemas' text type)

if TYPE_CHECKING:
    from crewlet.models import Seat


class Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


A = TypeVar("A", bound=Arguments)


@dataclass(frozen=True)
class ToolResult:
    ok: bool
    text: str
    data: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ToolCall(Generic[A]):
    seat: Seat
    run_id: str
    args: A


@dataclass(frozen=True)
class Tool:
    name: str
    description: str  # one line: when to use it
    arguments: type[Arguments]
    handler: Callable[[ToolCall[Any]], ToolResult]
    needs_run_id: bool = False

    def definition(self) -> dict:
        """A function-calling tool definition: name, description and a JSON schema of the arguments."""
        return {"name": self.name, "description": self.description, "parameters": self.input_schema()}

    def input_schema(self) -> dict:
        """The JSON schema of the arguments: a closed object, as every provider's form carries it."""
        return _schema(self.arguments)

    def parse(self, arguments: dict) -> Arguments:
        """The validated arguments, each string scrubbed of secrets first (a note, a hint or a skill body
        is stored or shown to a model; ``core.scrub``)."""
        try:
            return self.arguments.model_validate(scrub_json(arguments))
        except ValidationError as exc:
            raise bad_arguments(exc) from None


def _schema(model: type[BaseModel]) -> dict:
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    schema["additionalProperties"] = False
    return schema


def bad_arguments(exc: ValidationError) -> BadInput:
    errors = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ()))
        errors.append({"field": f"arguments.{loc}" if loc else "arguments", "message": err.get("msg", "invalid")})
    names = ", ".join(e["field"] for e in errors)
    return BadInput(f"invalid fields: {names}", errors=errors)


def refuse_field(exc: BadInput, field_name: str) -> BadInput:
    """The same refusal, naming the argument it is about."""
    return BadInput(exc.message, field=field_name, errors=[{"field": field_name, "message": exc.message}], **{
        k: v for k, v in exc.extra.items() if k not in ("field", "errors")
    })
