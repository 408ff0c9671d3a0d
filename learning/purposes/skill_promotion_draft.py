"""``skill_promotion_draft``: several agents' versions of one procedure distilled into one team page.

The steps may come as a list or as one comma- or newline-separated string; a missing summary is
unparseable (the page would have nothing to say). The parsed answer is the ``Answer`` model with
its empty steps dropped.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict

from core.answers import Text, TextList, stems, unsupported
from core.purposes import Purpose, read_json, system_user

NAME = "skill_promotion_draft"


class Inputs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    unit: str | None = None  # the team's name
    tools: list[str] = []  # the tools the skills share
    sibling_count: int | None = None
    distinct_agents: int | None = None
    skills: list[dict[str, Any]] = []  # each {"seat", "name", "description", "body", "tool_sequence"}


def _render(inputs: Inputs) -> list[dict]:
    system = (
        "Several agents of one team independently arrived at the same procedure; each learned it as "
        "its own skill. Distil them into ONE page for the team knowledge base, which a lead will review "
        "before any agent reads it. Write for a teammate: what it is for, when to use it, and the steps "
        "in order. Use only what the skills say: no tool, step or fact they do not contain. Answer with "
        'one JSON object: {"name": "short procedure name", "summary": "one paragraph", '
        '"when_to_use": "one or two sentences", "steps": ["step", ...]}.'
    )
    skills = "\n\n".join(
        f"### {s['name']} (agent {s['seat']})\nDescription: {s['description']}\n"
        f"Tools in order: {', '.join(s['tool_sequence']) or 'none recorded'}\n\n{s['body']}"
        for s in inputs.skills
    )
    user = (
        f"Team: {inputs.unit}\nTools they share: {', '.join(inputs.tools)}\n"
        f"{inputs.sibling_count} skills from {inputs.distinct_agents} distinct agents:\n\n{skills}"
    )
    return system_user(system, user)


def _summary(value: str) -> str:
    if not value:
        raise ValueError("no summary")
    return value


class Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: Text = ""
    summary: Annotated[Text, AfterValidator(_summary)]
    when_to_use: Text = ""
    steps: TextList = []


def _parse(text: str) -> Answer:
    answer = read_json(NAME, text, Answer)
    return answer.model_copy(update={"steps": [s for s in answer.steps if s]})


def _offline(inputs: Inputs) -> str:
    """The most common skill name, the seed's description, and the most common tool order as steps."""
    skills = inputs.skills
    names = Counter(s["name"] for s in skills)
    name = max(names, key=lambda n: (names[n], -[s["name"] for s in skills].index(n))) if names else ""
    orders = Counter(tuple(s["tool_sequence"]) for s in skills if s["tool_sequence"])
    order = max(orders, key=lambda o: (orders[o], len(o))) if orders else ()
    steps = [f"Call {tool}." for i, tool in enumerate(order) if i == 0 or order[i - 1] != tool]
    seed = skills[0] if skills else {"description": ""}
    summary = (
        f"{inputs.distinct_agents} agents of {inputs.unit} arrived at this procedure "
        f"independently ({inputs.sibling_count} skills). {seed['description']}".strip()
    )
    return json.dumps({"name": name, "summary": summary, "when_to_use": seed["description"], "steps": steps})


def _check(page: Answer, inputs: Inputs) -> str:
    """The page distils the skills shown: its summary shares a word with them."""
    shown = stems(*(f"{s['name']} {s['description']} {s['body']} {' '.join(s['tool_sequence'])}"
                    for s in inputs.skills))
    return "the summary shares no word with the skills shown" if unsupported(page.summary, shown) else ""


PURPOSE = Purpose(name=NAME, inputs=Inputs, render=_render, parse=_parse, offline=_offline, max_tokens=1000,
                  json=True, answer=Answer, check=_check)
