"""``episode_summary``: a briefing on the agent's own past turns that resemble the new task.

A free-text answer: a reasoning model's thinking is taken off; an empty briefing is unparseable.
Its input is bounded twice: each past turn's texts by ``learning.prefetch.bounds``, and the whole
prompt by the model's context window at the seam.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict

from core.answers import stems, unsupported, without_thinking
from core.purposes import AnswerUnparseable, Purpose, system_user

NAME = "episode_summary"


class Inputs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ask: str  # the new task
    # the past turns, each {"when", "outcome", "tools", "woken_by", "asked", "what_it_did"}
    turns: list[dict[str, Any]]


def _render_episode_summary(inputs: Inputs) -> list[dict]:
    turns = "\n\n".join(
        f"Turn {i} ({t['when']}, {t['outcome'] or 'outcome unknown'}; tools: {', '.join(t['tools']) or 'none'})\n"
        f"Woken by: {t['woken_by']}\nAsked: {t['asked'] or '(nothing recorded)'}\nWhat it did: {t['what_it_did']}"
        for i, t in enumerate(inputs.turns, 1)
    )
    return system_user(
        "You brief an agent on its own past turns that resemble the task it is starting. In a few sentences "
        "say what those turns were asked, what the agent did and how each ended, and what carries over to "
        "the new task. Name identifiers, tools and outcomes exactly; do not invent anything.",
        f"The new task:\n{inputs.ask}\n\nThe past turns:\n{turns}",
    )


def _offline_episode_summary(inputs: Inputs) -> str:
    parts = []
    for t in inputs.turns:
        asked = t["asked"] or t["woken_by"]
        first = re.split(r"(?<=[.!?])\s+", " ".join(asked.split()))[0]
        tools = ", ".join(dict.fromkeys(t["tools"])) or "no tools"
        parts.append(f"On {t['when']} you were asked: {first} It ended {t['outcome'] or 'unknown'} using {tools}.")
    return " ".join(parts)


def _parse_episode_summary(text: str) -> str:
    cleaned = without_thinking(text)
    if not cleaned:
        raise AnswerUnparseable(NAME, "empty briefing", text)
    return cleaned


def _check(briefing: str, inputs: Inputs) -> str:
    """A briefing tells of the past turns it was shown: it shares a word with them."""
    shown = stems(*(f"{t['asked']} {t['what_it_did']} {' '.join(t['tools'])}" for t in inputs.turns))
    return "the briefing shares no word with the past turns it was shown" if unsupported(briefing, shown) else ""


PURPOSE = Purpose(
    name=NAME, inputs=Inputs, render=_render_episode_summary, parse=_parse_episode_summary,
    offline=_offline_episode_summary, max_tokens=500, echo_of=("ask",), check=_check,
)
