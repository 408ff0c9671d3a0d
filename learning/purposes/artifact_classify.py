"""``artifact_classify``: each published lesson's artifact tier (fact, hook, rule, ...) and scope.

A batch: an item with an unknown tier, no scope or no integer id is dropped on its own, never the
batch; tiers are read case-blind ("Rule" is rule). The parsed answer is each kept lesson's
``Classification`` by its id.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict

from core.answers import Batch, Lower, Text
from core.purposes import Purpose, read_json, says_nothing, system_user
from learning.purposes.offline.lessons import FAILURE_LESSON

NAME = CLASSIFY = "artifact_classify"
TIERS = ("fact", "hook", "rule", "skill", "allowlist", "agent", "update", "delete")

_TIER_RULES = (
    ("delete", re.compile(r"\b(obsolete|no longer (?:needed|true|applies|used)|remove the (?:rule|hook|skill))\b", re.I)),
    ("update", re.compile(r"\b(has changed|now (?:uses|runs|lives)|was renamed|moved to)\b", re.I)),
    ("hook", re.compile(r"\b(?:before|after) (?:every|each|any) (?:commit|push|edit|write|tool call|change|model edit)\b", re.I)),
    ("allowlist", re.compile(r"\b(safe to run|always allowed|without asking|no need to ask|pre-?approved?)\b", re.I)),
    ("agent", re.compile(r"\b(delegate|subagent|sub-agent|separate agent|reviewer agent)\b", re.I)),
    ("skill", re.compile(r"\b(steps?:|checklist|procedure|how to|(?:is )?done only when|first\b.+\bthen)\b", re.I)),
    ("rule", re.compile(r"\b(never|always|must|do not|don't|only)\b", re.I)),
)
_TOPIC = re.compile(r"^\s*((?:[\w\-]+\s+){0,4}[\w\-]+)\s*:\s+\S")
_BACKTICK = re.compile(r"`([^`]+)`")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-]*(?:['’][A-Za-z]+)?")  # a contraction ("don't") is one word
_STOP = {"the", "a", "an", "is", "are", "in", "on", "of", "to", "here", "with", "and", "or", "for", "this", "that", "it"}
# how a rule is said, not what it is about ("Don't run the whole suite": its scope is "run whole suite")
_RULE_WORDS = {"don't", "don’t", "dont", "do", "not", "never", "always", "must", "only", "should", "shouldn't",
               "please", "avoid", "ever", "instead", "rather", "first"}


def offline_tier(text: str) -> str:
    """The first tier whose words the lesson has; a failed call's lesson (what it said, what worked) is a fact about
    the project's tools however its fix is worded ("Fix: `Read <path>` first, then the same call worked" is no
    procedure)."""
    if FAILURE_LESSON.match(text):
        return "fact"
    for tier, pattern in _TIER_RULES:
        if pattern.search(text):
            return tier
    return "fact"


def offline_scope(text: str) -> str:
    """The lesson's topic: a short lead-in before a colon, else its first command, else its first words."""
    topic = _TOPIC.match(text)
    if topic:
        return topic.group(1).strip()
    command = _BACKTICK.search(text)
    if command:
        return " ".join(command.group(1).split()[:3])
    words = [w for w in _WORD.findall(text) if len(w) > 1 and w.lower() not in _STOP | _RULE_WORDS]
    return " ".join(words[:3])


class Inputs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    lessons: list[dict[str, Any]] = []  # each {"id": the shard's id, "text": the lesson}


def _offline_classify(inputs: Inputs) -> str:
    items = [
        {"id": item["id"], "tier": offline_tier(item["text"]), "scope": offline_scope(item["text"])}
        for item in inputs.lessons
    ]
    return json.dumps({"items": items})


def _render_classify(inputs: Inputs) -> list[dict]:
    return system_user(
        "Classify each published lesson into the artifact that would shape the next agent's run: fact (a line "
        "of project knowledge), hook (an automatic check the harness runs), rule (an instruction in CLAUDE.md), "
        "skill (a reusable procedure), allowlist (a command safe to run without asking), agent (a specialised "
        "subagent), update (an existing artifact is now wrong), delete (an existing artifact should go). Give each "
        "a short scope naming what it is about. "
        'Answer JSON only: {"items": [{"id": 1, "tier": "...", "scope": "..."}]}',
        json.dumps(inputs.lessons, indent=1),
    )


def _known_tier(tier: str) -> str:
    if tier not in TIERS:
        raise ValueError(f"tier {tier!r} is not one of {', '.join(TIERS)}")
    return tier


def _scope(scope: str) -> str:
    if not scope:
        raise ValueError("an item needs a scope")
    return scope


class Item(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: int
    tier: Annotated[Lower, AfterValidator(_known_tier)]
    scope: Annotated[Text, AfterValidator(_scope)]


class Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    items: Batch[Item] = []


class Classification(BaseModel):
    """One lesson's tier and scope, as the parsed answer holds it under the lesson's id."""

    model_config = ConfigDict(extra="forbid")

    tier: str
    scope: str


def _parse_classify(text: str) -> dict[int, Classification]:
    if says_nothing(text):
        return {}
    items = read_json(CLASSIFY, text, Answer).items
    return {item.id: Classification(tier=item.tier, scope=item.scope) for item in items}


def _check(classified: dict[int, Classification], inputs: Inputs) -> str:
    """Only the lessons shown are classified."""
    shown = {item["id"] for item in inputs.lessons}
    unknown = [lesson_id for lesson_id in classified if lesson_id not in shown]
    return f"item ids that are not lessons shown: {unknown[:5]}" if unknown else ""


PURPOSE = Purpose(
    name=CLASSIFY, inputs=Inputs, render=_render_classify, parse=_parse_classify, offline=_offline_classify,
    max_tokens=1000, json=True, answer=Answer, check=_check,
)
