"""``transcript_shards``: the lessons one transcript episode teaches, each one sentence of cause and fix.

The prompt's word for nothing is an empty list (``{"shards": []}``); "none" and "NOOP" mean the same,
so an episode without a lesson is extracted once, not re-asked every run. An object without
``shards`` (``{}``, the episode given back) is no answer; nor is a lesson that repeats a line of the
episode or shares no word with it. A
shard that is not a lesson string is dropped on its own; a lesson past the bound is refused, not
stored (``learning.purposes.offline.lessons.bounded``). The offline heuristic is the documented rule in
``learning.purposes.offline.lessons``, not a model: good enough to run the whole loop with no key.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict

from core.answers import Batch, normalised, stems, unsupported
from core.purposes import Purpose, read_json, says_nothing, system_user
from learning.purposes.offline import lessons

NAME = SHARDS = "transcript_shards"
MIN_LESSON_WORDS = lessons.MIN_LESSON_WORDS

declarative = lessons.declarative


def offline_lessons(episode: dict) -> list[str]:
    """The lessons of one episode by rule (``learning.purposes.offline.lessons``): cause and fix, or the person's words."""
    if episode.get("kind") == "corrected":
        return lessons.correction_lessons(episode.get("correction", ""))
    if episode.get("kind") == "self_corrected":
        tool, attempt = _split(episode.get("attempt", ""))
        *between, worked = (episode.get("correction") or "").splitlines() or [""]
        _tool, fix = _split(worked)
        lesson = lessons.failure_lesson(tool=tool, attempt=attempt, error=episode.get("failure") or "", fix=fix,
                                        first=[_split(step) for step in between])
        return [lesson] if lesson else []
    return []


class Inputs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # the transcript episode: {"kind", "ask", "attempt", "failure", "correction"}
    episode: dict[str, Any] = {}


def _offline_shards(inputs: Inputs) -> str:
    return json.dumps({"shards": [{"lesson": lesson} for lesson in offline_lessons(inputs.episode)]})


def _split(summary: str) -> tuple[str, str]:
    """``Tool: detail`` as its two parts."""
    tool, _, detail = (summary or "").partition(": ")
    return tool.strip(), detail.strip()


def _render_shards(inputs: Inputs) -> list[dict]:
    episode = inputs.episode
    return system_user(
        "You read one episode from a coding agent's session transcript: what it was asked, what it tried, "
        "what went wrong and how it was corrected. State each lesson a future agent in this repository should "
        "know as one sentence: the cause (from the informative lines of the error, not 'Exit code 1') and the "
        "fix, in general terms, so the same cause in another session reads alike: write paths, ids, hashes, "
        "branch and file names as <path>, <id>, <hash>, <name>. Keep a person's negative instructions "
        f"(\"don't ...\"). At most {lessons.MAX_LESSON_CHARS} characters a lesson. Not a summary of the session, "
        "no secrets. "
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
    bounded = (lessons.bounded(lesson) for lesson in read_json(SHARDS, text, Answer).shards)
    return [lesson for lesson in bounded if lesson]  # a model's multi-KB "lesson" is refused, not stored


def _check(found: list[str], inputs: Inputs) -> str:
    """A lesson is not a line of the episode given back, and shares a word with the episode."""
    episode = inputs.episode
    given = {normalised(str(episode.get(k) or "")) for k in ("ask", "attempt", "failure")} - {""}
    shown = stems(*(str(episode.get(k) or "") for k in ("ask", "attempt", "failure", "correction")))
    for lesson in found:
        if normalised(lesson) in given:
            return f"lesson {lesson[:60]!r} repeats a line of the episode"
        if unsupported(lesson, shown):
            return f"lesson {lesson[:60]!r} shares no word with the episode"
    return ""


PURPOSE = Purpose(name=SHARDS, inputs=Inputs, render=_render_shards, parse=_parse_shards, offline=_offline_shards,
                  max_tokens=500, json=True, answer=Answer, check=_check)
