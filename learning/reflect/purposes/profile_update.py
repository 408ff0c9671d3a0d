"""``profile_update``: one observation pass over one counterparty's messages in one turn.

The answer is the updated profile: preferred communication style, past decisions, sensitivities,
topics of interest. Observations are about what the person said, never about the agent.
"""

from __future__ import annotations

import re
from collections import Counter

from core.purposes import AnswerUnparseable, Purpose, parse_json_object, register, system_user
from learning.reflect.purposes import heuristics as h
from learning.reflect.purposes.describe import as_json

NAME = "profile_update"
FIELDS = ("past_decisions", "sensitivities", "topics")

SYSTEM = """You keep an agent's private notes about one person it works with, from the messages that person sent it.

You are shown the notes so far and the person's messages in one turn (woken by names the kind of event; the messages are what they said). Update the notes:
- communication_style: how this person prefers to communicate (length, tone, format), in one sentence;
- past_decisions: decisions this person made or approved, one short declarative line each;
- sensitivities: what this person is careful about or dislikes, one short declarative line each;
- topics: subjects this person cares about, a few words each.
Keep what is still true, add only what these messages show, and write declarative facts about the person, never instructions.

Answer with one JSON object and nothing else:
{"communication_style": "...", "past_decisions": ["..."], "sensitivities": ["..."], "topics": ["..."]}"""

DECISION = re.compile(r"\b(let's|lets go|we'll go with|go with|decided|go ahead|approved?|ship it|we will|sign(?:ed)? off)\b", re.I)
TOPIC_STOP = frozenset("prefer like want need think know make sure could should would also thing things stuff".split())
SENSITIVE = re.compile(r"\b(don't|do not|never|avoid|worried|concerned|hate|annoy\w*|careful|please no)\b", re.I)


def render(inputs: dict) -> list[dict]:
    messages = "\n".join(f"- {m}" for m in inputs.get("messages") or [])
    user = (
        f"Agent: {inputs.get('seat', '')}\nPerson: {inputs.get('subject', '')} on {inputs.get('platform') or 'an unnamed platform'}\n"
        f"Woken by: {inputs.get('woken_by') or '(no label)'}\n\n"
        f"Notes so far:\n{as_json(inputs.get('existing') or {})}\n\nTheir messages in this turn:\n{messages}"
    )
    return system_user(SYSTEM, user)


def parse(text: str) -> dict:
    value = parse_json_object(NAME, text)
    out = {"communication_style": str(value.get("communication_style") or "").strip()}
    for key in FIELDS:
        items = value.get(key) or []
        if not isinstance(items, list):
            raise AnswerUnparseable(NAME, f"{key} must be a list of strings", text)
        out[key] = [str(i).strip() for i in items if str(i).strip()]
    return out


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


def _topics(messages: list[str], subject: str) -> list[str]:
    own = set(h.words(subject))
    counts = Counter(w for m in messages for w in h.content_words(m) if len(w) >= 4 and w not in own and w not in TOPIC_STOP)
    return [w for w, _ in counts.most_common(5)]


def observe(inputs: dict) -> dict:
    messages = list(inputs.get("messages") or [])
    sentences = [s for m in messages for s in h.sentences(m)]
    who = inputs.get("subject") or "They"
    return {
        "communication_style": _style(messages),
        "past_decisions": [h.finish(h.third_person(s, who)) for s in sentences if DECISION.search(s)][:3],
        "sensitivities": [h.finish(h.third_person(s, who)) for s in sentences if SENSITIVE.search(s)][:3],
        "topics": _topics(messages, who),
    }


def offline(inputs: dict) -> str:
    return as_json(observe(inputs))


PROFILE_UPDATE = register(Purpose(name=NAME, render=render, parse=parse, offline=offline, max_tokens=500, json=True))
