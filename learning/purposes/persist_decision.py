"""``persist_decision``: the PersistDecider's question, what (if anything) should persist?

The answer is one JSON object: ``classification`` LONG / SHORT / DOC / NOOP (the default),
``content`` (a declarative fact), ``ttl_days`` for SHORT, ``reason``. When skill reflection rides
this pass its section is appended (``learning.purposes.skill_reflection``) and the answer
may carry ``skill_actions``; without it the prompt is exactly the base prompt below.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict

from core.answers import Batch, Text, Upper, stems, unsupported
from core.purposes import AnswerUnparseable, Purpose, read_json, says_nothing, system_user
from core.words import sentences
from learning.limits import MAX_CONTENT_CHARS
from learning.purposes import skill_reflection as sr
from learning.purposes.describe import TurnInputs, as_json, describe_turn
from learning.purposes.offline import heuristics as h

NAME = "persist_decision"
CLASSIFICATIONS = ("LONG", "SHORT", "DOC", "NOOP")

WRITING_STYLE_RULE = (
    'Writing-style rule: persisted entries are declarative facts, not instructions. "User prefers concise '
    'responses" ✓ — "Always respond concisely" ✗. Instructions drift out of date and get re-discovered as '
    "contradictions; facts compose cleanly."
)

SYSTEM = f"""You review one turn an agent has just finished and decide what, if anything, the agent should keep in its private diary.

The turn is described by what woke it (the label of the waking event, which says what kind of event it was and nothing of what it said), the messages it received with their senders (or, for a wake with no messages, what it was asked), and what it did (the review's account of what landed, or its final answer).

Pick exactly one tier:
- LONG: a durable preference or fact about a person, the team or the work (no expiry).
- SHORT: a situation that will stop being true (a sprint focus, a vacation, a freeze, a delegation); give ttl_days, the number of days it stays true.
- DOC: something the whole team should know; it belongs in the team knowledge base, not in this agent's diary. Nothing is written; the recommendation is logged.
- NOOP: nothing worth persisting. This is the default and the common answer.

Persist only what a sender actually stated or what the turn established. Do not persist what the agent merely did, guesses, or anything already in the recent notes (a paraphrase of a recent note is a repeat).

{WRITING_STYLE_RULE}

A note is at most {MAX_CONTENT_CHARS} characters.

Answer with one JSON object and nothing else:
{{"classification": "LONG" | "SHORT" | "DOC" | "NOOP", "content": "the fact, or empty for NOOP", "ttl_days": number or null, "reason": "one short sentence"}}"""


class Inputs(TurnInputs):
    recent_notes: list[str] = []
    # set when skill reflection rides this pass: {"skills": [...], "read": {name: body}, "memory_closed": bool}
    skill_reflection: dict[str, Any] | None = None


def render(inputs: Inputs) -> list[dict]:
    recent = inputs.recent_notes
    notes = "\n".join(f"- {n}" for n in recent) if recent else "(none)"
    user = (
        f"Agent: {inputs.seat}\nToday: {inputs.today}\n\n"
        f"{describe_turn(inputs, with_senders=True)}\n\n"
        f"The agent's recent notes (do not repeat one):\n{notes}"
    )
    reflection = inputs.skill_reflection
    if not reflection:
        return system_user(SYSTEM, user)
    return system_user(SYSTEM + "\n\n" + sr.SECTION, user + "\n\n" + sr.render_context(reflection))


def _days(value):
    """``7``, ``"7"``, ``"7 days"``, ``7.0`` as whole days; anything without a number as None."""
    if isinstance(value, str):
        found = re.search(r"\d+", value)
        return int(found.group()) if found else None
    if isinstance(value, float):
        return int(value)
    return value


class Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    classification: Upper = "NOOP"
    content: Text = ""
    ttl_days: Annotated[int | None, BeforeValidator(_days)] = None
    reason: Text = ""
    skill_actions: Batch[dict] = []


class Decision(BaseModel):
    """The parsed answer: one of ``CLASSIFICATIONS``, its note (empty for NOOP), ``ttl_days`` for
    SHORT only, and the skill actions a reflecting pass asked for."""

    model_config = ConfigDict(extra="forbid")

    classification: str = "NOOP"
    content: str = ""
    ttl_days: int | None = None
    reason: str = ""
    skill_actions: list[dict[str, Any]] = []


def parse(text: str) -> Decision:
    if says_nothing(text):
        return Decision()
    answer = read_json(NAME, text, Answer)
    classification = next((c for c in CLASSIFICATIONS if answer.classification.startswith(c)), answer.classification)
    if classification not in CLASSIFICATIONS:
        raise AnswerUnparseable(NAME, f"classification {classification!r} is not one of {', '.join(CLASSIFICATIONS)}", text)
    content, ttl = answer.content, answer.ttl_days
    if classification in ("LONG", "SHORT", "DOC") and not content:
        raise AnswerUnparseable(NAME, f"a {classification} answer needs content", text)
    if classification == "SHORT":
        if ttl is None:
            raise AnswerUnparseable(NAME, "a SHORT answer needs ttl_days, a whole number of days", text)
        if ttl < 1:
            raise AnswerUnparseable(NAME, "ttl_days must be at least 1", text)
    else:
        ttl = None
    return Decision(
        classification=classification,
        content=content if classification != "NOOP" else "",
        ttl_days=ttl,
        reason=answer.reason,
        skill_actions=[{str(k): v for k, v in a.items()} for a in answer.skill_actions],
    )


def turn_text(inputs: Inputs) -> list[str]:
    """What a note may be drawn from: what the senders said, what was asked, what the turn did."""
    return [*(i.get("body", "") for i in inputs.interactions), inputs.asked, inputs.what_it_did]


def names(inputs: Inputs) -> frozenset[str]:
    """The seat's and the senders' names: a note that shares only a name with the turn states nothing of it."""
    return stems(inputs.seat, *(i.get("sender", "") for i in inputs.interactions))


def check(answer: Decision, inputs: Inputs) -> str:
    """A note must state something the turn's text supports (a word beyond the names in it)."""
    if answer.classification == "NOOP":
        return ""
    if unsupported(answer.content, stems(*turn_text(inputs)), ignore=names(inputs)):
        return f"the {answer.classification} note states nothing the turn's text supports"
    return ""


def decide(inputs: Inputs) -> dict:
    """The offline decision: the first stated situation, preference or team practice; else NOOP."""
    from datetime import date

    today = date.fromisoformat(inputs.today or date.today().isoformat())
    sources = [(i["sender"], i["body"]) for i in inputs.interactions if i.get("sender_kind", "human") == "human"]
    if not inputs.interactions and inputs.asked:
        sources = [("The requester", inputs.asked)]
    recent = inputs.recent_notes
    for who, body in sources:
        for sentence in sentences(body):
            found = _classify(sentence, who, today)
            if found is None:
                continue
            found_words = h.words(found["content"])
            if any(h.overlap(found_words, note) >= 0.8 for note in recent):
                return {"classification": "NOOP", "content": "", "ttl_days": None, "reason": "already in the recent notes"}
            return found
    return {"classification": "NOOP", "content": "", "ttl_days": None, "reason": "nothing stated worth keeping"}


def _classify(sentence: str, who: str, today) -> dict | None:
    situation = h.situation_note(sentence, who, today)
    if situation:
        return {"classification": "SHORT", "content": situation[0], "ttl_days": situation[1], "reason": "a dated situation"}
    team = h.team_note(sentence, who)
    if team:
        return {"classification": "DOC", "content": team, "ttl_days": None, "reason": "team-relevant practice"}
    fact = h.preference_fact(sentence, who)
    if fact:
        return {"classification": "LONG", "content": fact, "ttl_days": None, "reason": "a stated preference"}
    return None


def offline(inputs: Inputs) -> str:
    answer = decide(inputs)
    reflection = inputs.skill_reflection
    if reflection:
        answer["skill_actions"] = sr.offline_actions(inputs, reflection)
    return as_json(answer)


PURPOSE = Purpose(name=NAME, inputs=Inputs, render=render, parse=parse, offline=offline, max_tokens=700, json=True,
                  answer=Answer, echo_of=("woken_by", "asked", "what_it_did", "interactions"), check=check)
