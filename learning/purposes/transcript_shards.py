"""``transcript_shards``: the lessons one transcript episode teaches, each a declarative sentence.

The prompt's word for nothing is an empty list (``{"shards": []}``); "none", "NOOP" and an empty
object mean the same, so an episode without a lesson is extracted once, not re-asked every run. A
shard that is not a lesson string is dropped on its own. The offline heuristic is a documented
rule, not a model: good enough to run the whole loop with no key.
"""

from __future__ import annotations

import json
import re
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict

from core.answers import Batch
from core.purposes import Purpose, read_json, says_nothing, system_user

NAME = SHARDS = "transcript_shards"
MIN_LESSON_WORDS = 5

# ---- shard extraction --------------------------------------------------------------------------

_LEAD = re.compile(
    r"^\s*(?:(?:no|nope|nah|again|actually|stop|wrong|as i said|i said|please|instead|undo)\b[\s,.:;!\-—–]*)+", re.I
)
_FIRST_SENTENCE = re.compile(r"^(.+?[.!?])(?:\s|$)", re.S)


def sentences(text: str) -> list[str]:
    out, rest = [], (text or "").strip()
    while rest:
        match = _FIRST_SENTENCE.match(rest)
        piece = match.group(1) if match else rest
        out.append(piece.strip())
        rest = rest[len(piece):].strip()
    return out


def declarative(text: str) -> str:
    """A correction restated as a standalone fact: corrective remarks dropped, its first full sentence, a full stop."""
    for sentence in sentences(text):
        sentence = _LEAD.sub("", sentence).strip()
        if len(sentence.split()) < MIN_LESSON_WORDS:
            continue  # "That's not enough.", "Stop." : a remark, not the lesson
        sentence = sentence[0].upper() + sentence[1:]
        return sentence if sentence[-1] in ".!?" else sentence + "."
    return ""


def _offline_shards(inputs: dict) -> str:
    episode = inputs.get("episode") or {}
    lessons = []
    if episode.get("kind") == "corrected":
        lesson = declarative(episode.get("correction", ""))
        if len(lesson.split()) >= MIN_LESSON_WORDS and not lesson.endswith("?"):
            lessons.append(lesson)
    elif episode.get("kind") == "self_corrected":
        failed = _command(episode.get("attempt", ""))
        worked = _command(episode.get("correction", ""))
        error = (episode.get("failure") or "").strip().splitlines()
        if failed and worked and failed != worked:
            reason = f" ({error[0].strip()[:160]})" if error else ""
            lessons.append(f"`{failed}` fails here{reason}; `{worked}` works instead.")
    return json.dumps({"shards": [{"lesson": lesson} for lesson in lessons]})


def _command(summary: str) -> str:
    return summary.split(": ", 1)[1].strip() if ": " in summary else summary.strip()


def _render_shards(inputs: dict) -> list[dict]:
    episode = inputs.get("episode") or {}
    return system_user(
        "You read one episode from a coding agent's session transcript: what it was asked, what it tried, "
        "what went wrong and how it was corrected. State each lesson a future agent in this repository should "
        "know as one declarative sentence of fact (not an instruction to this agent, not a summary of the "
        "session). Nothing session-specific, no secrets or placeholders. "
        'Answer JSON only: {"shards": [{"lesson": "..."}]}, and {"shards": []} when there is no lesson.',
        json.dumps({k: episode.get(k, "") for k in ("kind", "ask", "attempt", "failure", "correction")}, indent=1),
    )


def _lesson(item):
    """A shard as ``{"lesson": "..."}`` or as the bare string."""
    return item.get("lesson") if isinstance(item, dict) else item


Lesson = Annotated[str, BeforeValidator(_lesson)]


class Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    shards: Batch[Lesson] = []


def _parse_shards(text: str) -> list[str]:
    if says_nothing(text):
        return []
    return [lesson.strip() for lesson in read_json(SHARDS, text, Answer).shards if lesson.strip()]


PURPOSE = Purpose(SHARDS, _render_shards, _parse_shards, _offline_shards, max_tokens=400, json=True, answer=Answer)
