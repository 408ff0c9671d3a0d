"""``skill_draft``: draft a procedural skill from one turn (inline) or one cluster of turns (clustered).

Declining is the ordinary answer: most turns are not procedures. The answer is a JSON object,
either ``{"decline": true, "reason": ...}`` or ``{"name", "summary", "body"}``; a draft missing
any of the three is dropped by the caller rather than written with the gap.
"""

from __future__ import annotations

import re

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from core import words as vocabulary
from core.answers import Text, stems, unsupported
from core.purposes import Purpose, read_json, says_nothing, system_user
from learning.purposes.describe import TurnInputs, as_json, describe_turn
from learning.purposes.offline import task_class

NAME = "skill_draft"

SYSTEM = """You decide whether an agent's work shows a reusable procedure worth keeping as a skill, and if so you draft it.

Each turn is described by what woke it (the label of the waking event, which says what kind of event it was and nothing of what it said), what it was asked, and what it did (the review's account of what landed, or its final answer), with its outcome and the tools it called in order. The agent's own memory and skill tools (recalling its past turns, saving a note, loading or correcting a skill) are left out of those runs: they are how it learns, not steps of its work.

Declining is the ordinary answer: most work is not a procedure. Draft only when the tool run is a repeatable way of doing a class of work that will come again. Name the skill for the class of work (lowercase words joined by hyphens), never for this incident: no ticket keys, names, dates or version numbers.

The body is a SKILL.md Markdown document: a title, "## When to use", and "## Steps" as a numbered list naming the tools in the order they are called, with what to check at each step.

Answer with one JSON object and nothing else: {"decline": true, "reason": "..."} or {"name": "...", "summary": "one sentence: what the skill does and when", "body": "..."}"""


class Inputs(TurnInputs):
    """One turn (``mode`` "turn"), or a cluster of alike turns (``mode`` "cluster": ``members``, the
    run they share in ``tool_sequence``)."""

    mode: str = ""
    cluster_size: int = 0
    members: list[TurnInputs] = []
    prior_runs: int = 0  # earlier turns of the seat with a similar tool run
    prior_asks: list[str] = []  # what the newest of them were asked
    existing_skills: list[str] = []


def render(inputs: Inputs) -> list[dict]:
    existing = ", ".join(inputs.existing_skills) or "(none)"
    if inputs.mode == "cluster":
        members = "\n\n".join(f"Turn {n}:\n{describe_turn(m)}" for n, m in enumerate(inputs.members, start=1))
        body = (
            f"Agent: {inputs.seat}\n"
            f"{inputs.cluster_size} of the agent's recent turns ran this same shape of tool run. "
            f"A run that actually happened: {', '.join(inputs.tool_sequence)}\n\n"
            f"Examples:\n{members}"
        )
    else:
        earlier = "".join(f"\n- {ask}" for ask in inputs.prior_asks)
        body = (
            f"Agent: {inputs.seat}\n{describe_turn(inputs)}\n"
            f"Earlier turns of this agent with a similar tool run: {inputs.prior_runs}"
            + (f"; the newest were asked:{earlier}" if earlier else "")
        )
    return system_user(SYSTEM, f"{body}\n\nThe agent's existing skills: {existing}")


class Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    decline: bool = False
    reason: Text = ""
    name: Text = ""
    summary: Text = Field("", validation_alias=AliasChoices("summary", "description"))
    body: Text = ""


# what names an incident rather than a class of work: ticket keys (POC-518, #42), dates, versions, numbers
_INCIDENT = re.compile(r"\b[A-Za-z][A-Za-z0-9]*-\d+\b|#\d+|\b\d{4}-\d{2}-\d{2}\b|\bv?\d+(?:\.\d+)*\b")


def task_class_name(text: str) -> str:
    """A skill name for the class of work: the incident's identifiers dropped, then slugged."""
    kept = [w for w in vocabulary.slug(_INCIDENT.sub(" ", text)).split("-") if w and not any(c.isdigit() for c in w)]
    return "-".join(kept)


class Draft(BaseModel):
    """The parsed answer: a decline and its reason, or a draft named for the class of work, with
    ``missing`` naming what it left empty (the caller drops such a draft)."""

    model_config = ConfigDict(extra="forbid")

    decline: bool
    reason: str = ""
    name: str = ""
    summary: str = ""
    body: str = ""

    @property
    def missing(self) -> list[str]:
        """The parts a draft (not a decline) left empty, in the order they are asked for."""
        return [] if self.decline else [k for k in ("name", "summary", "body") if not getattr(self, k)]


def parse(text: str) -> Draft:
    if says_nothing(text):
        return Draft(decline=True, reason="the model answered that there is nothing to draft")
    answer = read_json(NAME, text, Answer)
    if answer.decline:
        return Draft(decline=True, reason=answer.reason)
    return Draft(decline=False, name=task_class_name(answer.name), summary=answer.summary, body=answer.body)


def _turns(inputs: Inputs) -> list[TurnInputs]:
    """The turns the draft is drawn from: the cluster's members, or the one turn."""
    return inputs.members if inputs.mode == "cluster" else [inputs]


def work_words(inputs: Inputs) -> frozenset[str]:
    """The words of the work a skill may be named for: its tools (split at ``_``, ``-`` and ``.``), what
    the turns were asked and what they did."""
    members = _turns(inputs)
    tools = [*inputs.tool_sequence, *(t for m in members for t in m.tools_called)]
    texts = [re.sub(r"[_.\-]+", " ", tool) for tool in tools]
    for member in members:
        texts += [member.asked, member.what_it_did]
    return stems(*texts, *inputs.prior_asks)


def check(draft: Draft, inputs: Inputs) -> str:
    """A draft has a name, a summary and a body; its name is not the seat's and names a tool or object of the work."""
    if draft.decline:
        return ""
    if draft.missing:
        return f"the draft leaves {', '.join(draft.missing)} empty"
    name = draft.name
    if name.replace("-", "") == vocabulary.slug(inputs.seat).replace("-", ""):
        return f"the skill is named {name!r}, the seat's handle"
    if unsupported(name.replace("-", " "), work_words(inputs)):
        return f"the skill name {name!r} names no tool or object of the work"
    return ""


def _generalise(text: str) -> str:
    text = re.sub(r"\b[A-Z][A-Z0-9]+-\d+\b", "<ticket>", text)
    text = re.sub(r"\b\d+(?:\.\d+)+\b|\b\d{2,}\b", "<n>", text)
    return " ".join(text.split())


def _steps(tools: list[str]) -> list[str]:
    steps: list[str] = []
    for tool in tools:
        if not steps or steps[-1] != tool:
            steps.append(tool)
    return steps


def draft(inputs: Inputs) -> dict:
    """The offline draft: decline a first run, a failure or a one-tool loop; else a SKILL.md from the run."""
    tools = list(inputs.tool_sequence)
    cluster = inputs.mode == "cluster"
    if len(set(tools)) < (2 if cluster else 3):
        return {"decline": True, "reason": "the tool run is one or two tools repeated, not a procedure"}
    if not cluster and inputs.outcome != "done":
        return {"decline": True, "reason": "a failed run is not a procedure to repeat"}
    if not cluster and inputs.prior_runs < 1:
        return {"decline": True, "reason": "the first run of this shape; not yet a pattern"}
    members = _turns(inputs)
    # a turn's own ask first, then what the alike runs before it were asked: the class of work is what they share
    asks = [m.asked or m.woken_by or "" for m in members] + list(inputs.prior_asks)
    # the acting tool is read from every call of the turn where the record has them (a runtime may post a
    # final round that holds only the reply); the steps are the run that is stored with the skill
    called = [t for m in members for t in m.tools_called] or tools
    action = task_class.acting(called, "\n".join(asks))
    name = task_class.name(called, asks) or vocabulary.slug(f"{tools[0]}-to-{tools[-1]}")
    what = task_class.phrase(action, name, asks)
    title = what[:1].upper() + what[1:]
    example = _generalise(task_class.work_sentence(asks, action))
    steps = _steps(tools)
    numbered = "\n".join(f"{n}. Call `{tool}`." for n, tool in enumerate(steps, start=1))
    summary = f"{title}: the {len(steps)}-step run of {', '.join(steps)}."
    when = f"When asked to {what}" + (f", as in: \"{example}\"" if example else ".")
    body = f"# {title}\n\n## When to use\n{when}\n\n## Steps\n{numbered}\n"
    return {"name": name, "summary": summary, "body": body}


def offline(inputs: Inputs) -> str:
    return as_json(draft(inputs))


PURPOSE = Purpose(name=NAME, inputs=Inputs, render=render, parse=parse, offline=offline, max_tokens=1000, json=True,
                  answer=Answer, echo_of=("woken_by", "asked", "what_it_did", "seat"), check=check)
