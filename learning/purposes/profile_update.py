"""``profile_update``: one observation pass over one counterparty's messages in one turn.

The answer is what these messages ADD to the profile (a delta the profiler merges): the
communication style when they show it, and new past decisions, sensitivities and topics, at most
``MAX_NEW`` a list, so the answer fits its budget however long the profile has grown.
Observations are about what the person said, never about the agent. The parsed answer is the
``Answer`` model, its lists held to that bound.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict

from core.answers import Text, TextList, stems, unsupported
from core.purposes import Purpose, read_json, says_nothing, system_user
from core.words import sentences
from learning.purposes.describe import as_json
from learning.purposes.offline import heuristics as h
from learning.purposes.offline import topics
from learning.purposes.offline.person import personal_we, third_person

NAME = "profile_update"
FIELDS = ("past_decisions", "sensitivities", "topics")
MAX_NEW = 5  # new items a list per answer: 3 lists x 5 short lines stay well inside the budget

SYSTEM = f"""You keep an agent's private notes about one person it works with, from the messages that person sent it.

You are shown the notes so far and the person's messages in one turn (woken by names the kind of event; the messages are what they said). Say only what these messages ADD to the notes; the notes so far are kept for you:
- communication_style: how this person prefers to communicate (length, tone, format), in one sentence, or "" when these messages show nothing new;
- past_decisions: decisions this person made or approved here, one short declarative line each;
- sensitivities: what this person is careful about or dislikes, one short declarative line each;
- topics: subjects this person cares about, a few words each.
Each list holds only items that are not already in the notes, at most {MAX_NEW}; an empty list when there is nothing new. Write declarative facts about the person, never instructions.

Answer with one JSON object and nothing else:
{{"communication_style": "...", "past_decisions": ["..."], "sensitivities": ["..."], "topics": ["..."]}}"""

DECISION = re.compile(r"\b(let's|lets go|we'll go with|go with|decided|go ahead|approved?|ship it|we will|sign(?:ed)? off)\b", re.I)
SENSITIVE = re.compile(r"\b(don't|do not|never|avoid|worried|concerned|hate|annoy\w*|careful|please no)\b", re.I)


class Inputs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seat: str = ""
    subject: str = ""  # the person's name
    platform: str = ""
    woken_by: str = ""
    messages: list[str] = []  # what the person sent in this turn
    existing: dict[str, Any] = {}  # the notes so far: communication_style and the FIELDS lists


def render(inputs: Inputs) -> list[dict]:
    messages = "\n".join(f"- {m}" for m in inputs.messages)
    user = (
        f"Agent: {inputs.seat}\nPerson: {inputs.subject} on {inputs.platform or 'an unnamed platform'}\n"
        f"Woken by: {inputs.woken_by or '(no label)'}\n\n"
        f"Notes so far:\n{as_json(inputs.existing)}\n\nTheir messages in this turn:\n{messages}"
    )
    return system_user(SYSTEM, user)


class Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    communication_style: Text = ""
    past_decisions: TextList = []
    sensitivities: TextList = []
    topics: TextList = []


def parse(text: str) -> Answer:
    if says_nothing(text):
        return Answer()
    answer = read_json(NAME, text, Answer)
    # the prompt's bound, held by code: at most MAX_NEW new items a list
    bounded = {field: [v for v in getattr(answer, field) if v][:MAX_NEW] for field in FIELDS}
    return answer.model_copy(update=bounded)


def check(answer: Answer, inputs: Inputs) -> str:
    """Every item is about what this person said: it shares a word, beyond their name, with their messages."""
    said = stems(*inputs.messages)
    name = stems(inputs.subject, inputs.seat)
    for field in FIELDS:
        for item in getattr(answer, field):
            if unsupported(item, said, ignore=name):
                return f"{field} item {item[:60]!r} shares no word with what {inputs.subject or 'the person'} said"
    return ""


def _style(messages: list[str]) -> str:
    lengths = [len(m.split()) for m in messages] or [0]
    average = sum(lengths) / len(lengths)
    style = "terse, short messages" if average < 12 else "conversational messages" if average < 40 else "detailed, long messages"
    traits = []
    joined = " ".join(messages)
    if "?" in joined:
        traits.append("asks direct questions")
    if re.search(r"\b(please|thanks|thank you)\b", joined, re.I):
        traits.append("polite")
    if re.search(r"^\s*[-*\d]+[.)]?\s", "\n".join(messages), re.M):
        traits.append("writes in lists")
    if re.search(r"\b(asap|urgent|right now|immediately)\b", joined, re.I):
        traits.append("signals urgency")
    return f"Writes {style}" + (f"; {', '.join(traits)}" if traits else "") + "."


# a profile is read in later turns, away from the thread: it holds statements about the person, never an order in
# their words. "Let's ..." is what they decided ("Let's go with Thursday" -> "Maya decided to go with Thursday"); a
# sentence that asks or instructs ("Don't touch the queue", "..., so don't book reviews before 9am") is not kept.
_LETS = re.compile(r"^(?:let['’]?s|let us)\s+(?P<neg>not\s+)?(?P<rest>\S.*)$", re.I)


def _about(sentence: str, who: str) -> str | None:
    """A sender's sentence as a statement about them ("we" their team only when it names work; "let's" as what
    they decided), or None for a question, a request or an instruction."""
    group = personal_we(sentence)
    text = h.LEAD_WORDS.sub("", sentence.strip()).strip() or sentence.strip()
    if m := _LETS.match(text):
        if h.statement(m["rest"]) is None:
            return None
        return h.finish(f"{who} decided {'not ' if m['neg'] else ''}to " + third_person(m["rest"], who, named=True, group=group))
    if h.statement(sentence) is None:
        return None
    return h.finish(third_person(sentence, who, group=group))


def _said(sentences_: list[str], pattern: re.Pattern, who: str) -> list[str]:
    return [line for line in (_about(s, who) for s in sentences_ if pattern.search(s)) if line][:3]


def observe(inputs: Inputs) -> dict:
    messages = list(inputs.messages)
    said = [s for m in messages for s in sentences(m)]
    who = inputs.subject or "They"
    return {
        "communication_style": _style(messages),
        "past_decisions": _said(said, DECISION, who),
        "sensitivities": _said(said, SENSITIVE, who),
        "topics": topics.topics(messages, subject=who, limit=MAX_NEW,
                                known=inputs.existing.get("topics") or []),
    }


def offline(inputs: Inputs) -> str:
    return as_json(observe(inputs))


PURPOSE = Purpose(name=NAME, inputs=Inputs, render=render, parse=parse, offline=offline, max_tokens=600, json=True,
                  answer=Answer, echo_of=("woken_by", "subject", "platform"), check=check)
