"""``artifact_draft``: the body of one Claude Code artifact that teaches a set of lessons.

The body is Markdown or a script, so raw newlines inside the JSON string are read as written.
The parsed answer is the ``Answer`` model itself: its fields need no normalising.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from core.purposes import Purpose, read_json, system_user

NAME = DRAFT = "artifact_draft"


class Inputs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tier: str | None = None
    name: str | None = None  # the artifact's file name
    scope: Any = None  # what the lessons are about
    lessons: list[str] | None = None
    existing: str = ""  # the artifact's present body, when one is written


def _offline_draft(inputs: Inputs) -> str:
    lessons = [str(x) for x in inputs.lessons or []]
    name = inputs.name or "lesson"
    description = lessons[0] if lessons else name
    body = "\n".join(f"- {lesson}" for lesson in lessons)
    return json.dumps({"name": name, "description": description, "body": body})


def _render_draft(inputs: Inputs) -> list[dict]:
    return system_user(
        f"Draft the body of a Claude Code {inputs.tier} artifact named {inputs.name!r} that teaches the "
        "lessons below to the next agent. Plain, specific, no filler; the file's front matter is added for you. "
        'Answer JSON only: {"name": "kebab-case", "description": "one line", "body": "markdown or script"}',
        json.dumps({"scope": inputs.scope, "lessons": inputs.lessons, "existing": inputs.existing}, indent=1),
    )


class Answer(BaseModel):
    """The draft as the model answers it, and as the purpose's parse returns it."""

    model_config = ConfigDict(extra="ignore")

    name: str
    description: str = Field(validation_alias=AliasChoices("description", "summary"))
    body: str


def _parse_draft(text: str) -> Answer:
    return read_json(DRAFT, text, Answer)


def _check(draft: Answer, inputs: Inputs) -> str:
    """A draft has a body, and the body teaches the lessons: it shares a word with them."""
    from core.answers import stems, unsupported

    if not draft.body.strip():
        return "the body is empty"
    if unsupported(draft.body, stems(*(str(x) for x in inputs.lessons or []))):
        return "the body shares no word with the lessons"
    return ""


PURPOSE = Purpose(name=DRAFT, inputs=Inputs, render=_render_draft, parse=_parse_draft, offline=_offline_draft,
                  max_tokens=1400, json=True, answer=Answer, check=_check)
