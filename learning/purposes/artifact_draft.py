"""``artifact_draft``: the body of one Claude Code artifact that teaches a set of lessons.

The body is Markdown or a script, so raw newlines inside the JSON string are read as written.
"""

from __future__ import annotations

import json

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from core.purposes import Purpose, read_json, system_user

NAME = DRAFT = "artifact_draft"


def _offline_draft(inputs: dict) -> str:
    lessons = [str(x) for x in inputs.get("lessons") or []]
    name = inputs.get("name") or "lesson"
    description = lessons[0] if lessons else name
    body = "\n".join(f"- {lesson}" for lesson in lessons)
    return json.dumps({"name": name, "description": description, "body": body})


def _render_draft(inputs: dict) -> list[dict]:
    return system_user(
        f"Draft the body of a Claude Code {inputs.get('tier')} artifact named {inputs.get('name')!r} that teaches the "
        "lessons below to the next agent. Plain, specific, no filler; the file's front matter is added for you. "
        'Answer JSON only: {"name": "kebab-case", "description": "one line", "body": "markdown or script"}',
        json.dumps({"scope": inputs.get("scope"), "lessons": inputs.get("lessons"), "existing": inputs.get("existing", "")}, indent=1),
    )


class Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str
    description: str = Field(validation_alias=AliasChoices("description", "summary"))
    body: str


def _parse_draft(text: str) -> dict:
    return read_json(DRAFT, text, Answer).model_dump()


def _check(draft: dict, inputs: dict) -> str:
    """A draft has a body, and the body teaches the lessons: it shares a word with them."""
    from core.answers import stems, unsupported

    if not draft["body"].strip():
        return "the body is empty"
    if unsupported(draft["body"], stems(*(str(x) for x in inputs.get("lessons") or []))):
        return "the body shares no word with the lessons"
    return ""


PURPOSE = Purpose(DRAFT, _render_draft, _parse_draft, _offline_draft, max_tokens=1400, json=True, answer=Answer,
                  echo_of=(), check=_check)
