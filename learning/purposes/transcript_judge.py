"""``transcript_judge``: an independent verdict on one candidate lesson, kept or not.

``kept`` is read leniently (``"false"``, ``"yes"``, ``0``); a missing verdict is unparseable.
The parsed answer is the ``Answer`` model itself.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict

from core.answers import Text
from core.purposes import Purpose, read_json, system_user
from learning.purposes.transcript_shards import MIN_LESSON_WORDS

NAME = JUDGE = "transcript_judge"

_SPECIFIC = re.compile(r"\b(this session|just now|today|yesterday|above|earlier in)\b", re.I)


class Inputs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    lesson: str | None = None
    # what supports it: {"distinct_sources": n, "corroborated_by": [...], "submitted_by": "..."}
    evidence: dict[str, Any] | None = None
    episode: dict[str, Any] | None = None  # the episode it was learned from: {"kind", "ask", "failure", "correction"}


def _offline_judge(inputs: Inputs) -> str:
    """Keep a lesson that is a declarative general statement with evidence beyond its own session."""
    lesson = str(inputs.lesson or "")
    evidence = inputs.evidence or {}
    if "[REDACTED:" in lesson:
        return json.dumps({"kept": False, "reason": "the lesson is built around a redacted secret"})
    if len(lesson.split()) < MIN_LESSON_WORDS or lesson.rstrip().endswith("?"):
        return json.dumps({"kept": False, "reason": "not a declarative statement of fact"})
    if _SPECIFIC.search(lesson):
        return json.dumps({"kept": False, "reason": "specific to one session, not a lasting lesson"})
    sources = int(evidence.get("distinct_sources") or 0)
    if sources < 2 and not evidence.get("corroborated_by") and not evidence.get("submitted_by"):
        return json.dumps({"kept": False, "reason": "no evidence beyond a single session"})
    return json.dumps({"kept": True, "reason": f"general and supported ({sources} distinct source(s))"})


def _render_judge(inputs: Inputs) -> list[dict]:
    return system_user(
        "You are an independent judge of candidate lessons learned from coding-agent transcripts. You did not "
        "write this lesson. Keep it only if it is true in general for this repository, stated as a fact, useful "
        "to a future agent, and supported by the evidence; a lesson repeated within one session is not evidence. "
        'Declining is a normal answer. Answer JSON only: {"kept": true|false, "reason": "..."}',
        json.dumps({"lesson": inputs.lesson, "evidence": inputs.evidence, "episode": inputs.episode}, indent=1),
    )


class Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    kept: bool
    reason: Text = ""


def _parse_judge(text: str) -> Answer:
    return read_json(JUDGE, text, Answer)


PURPOSE = Purpose(name=JUDGE, inputs=Inputs, render=_render_judge, parse=_parse_judge, offline=_offline_judge,
                  max_tokens=300, json=True, answer=Answer, echo_of=("lesson",))
