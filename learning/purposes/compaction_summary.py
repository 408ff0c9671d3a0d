"""``compaction_summary``: what a cluster of one agent's past turns had in common, as one summary row.

``subjects_involved`` may come as a list or as one comma-separated string; a missing
``common_task_pattern`` is unparseable (the compacted row would describe nothing). The parsed
answer is the ``Answer`` model with its empty subjects dropped.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict

from core.answers import Text, TextList, stems, unsupported
from core.purposes import Purpose, read_json, system_user

NAME = "compaction_summary"


class Inputs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # the cluster's turns, each {"task", "outcome", "ended", "tools", "date"}
    members: list[dict[str, Any]]


def _render(inputs: Inputs) -> list[dict]:
    lines = []
    for n, m in enumerate(inputs.members, 1):
        lines.append(
            f"{n}. [{m['date']}, ended {m['ended'] or 'unknown'}] task: {m['task']}\n"
            f"   outcome: {m['outcome'] or '(no account)'}\n   tools: {', '.join(m['tools'])}"
        )
    return system_user(
        "You compact an AI agent's long-term memory. You are shown past turns of ONE agent that used "
        "overlapping tools. They will be replaced by a single summary the agent reads later as "
        "'you have done this kind of work N times', so say what they had in common, concretely. "
        "Texts marked (condensed) were shortened for you. Answer with one JSON object and nothing else: "
        '{"common_task_pattern": "one sentence: the kind of work these turns did", '
        '"common_outcome": "one sentence: how such turns usually ended and what they produced", '
        '"subjects_involved": ["people, systems, repositories, tickets or services named"], '
        '"notable_patterns": "one or two sentences: what varied between them, recurring pitfalls"}',
        f"{len(inputs.members)} turns:\n\n" + "\n".join(lines),
    )


def _pattern(value: str) -> str:
    if not value:
        raise ValueError("common_task_pattern is missing or empty")
    return value


class Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    common_task_pattern: Annotated[Text, AfterValidator(_pattern)]
    common_outcome: Text = ""
    subjects_involved: TextList = []
    notable_patterns: Text = ""


def _parse(text: str) -> Answer:
    answer = read_json(NAME, text, Answer)
    return answer.model_copy(update={"subjects_involved": [s for s in answer.subjects_involved if s]})


_SUBJECT = re.compile(r"\b(?:[A-Z][A-Z0-9]+-\d+|[A-Z][a-zA-Z0-9_.-]{2,}|@[\w.-]+|#\d+)\b")
_WORD = re.compile(r"[a-zA-Z][a-zA-Z0-9_-]{2,}")
_STOP = {"the", "and", "for", "from", "with", "that", "this", "was", "were", "message", "asked"}


def _offline(inputs: Inputs) -> str:
    """Words most members' tasks share; the outcome tally; named subjects; tools that vary."""
    members = inputs.members
    half = max(1, len(members) // 2)
    per_task = [dict.fromkeys(w.lower() for w in _WORD.findall(m["task"]) if w.lower() not in _STOP) for m in members]
    counts = Counter(w for words in per_task for w in words)
    shared = [w for w in per_task[0] if counts[w] >= half][:8] if per_task else []
    tools = [set(m["tools"]) for m in members]
    always = sorted(set.intersection(*tools)) if tools else []
    varied = sorted(set.union(*tools) - set(always)) if tools else []
    done = sum(1 for m in members if m["ended"] == "done")
    subjects = Counter(s for m in members for s in dict.fromkeys(_SUBJECT.findall(m["task"] + " " + m["outcome"])))
    answer = {
        "common_task_pattern": f"Work about {' '.join(shared)}" if shared else f"Turns using {', '.join(always)}",
        "common_outcome": f"{done} of {len(members)} ended done; the usual tools were {', '.join(always) or 'mixed'}.",
        "subjects_involved": [s for s, n in subjects.most_common(8) if n >= 2] or [s for s, _ in subjects.most_common(3)],
        "notable_patterns": f"Tools that varied: {', '.join(varied)}." if varied else "The same tools every time.",
    }
    return json.dumps(answer)


def _check(summary: Answer, inputs: Inputs) -> str:
    """The pattern is one of the turns shown: it shares a word with their tasks, outcomes or tools."""
    shown = stems(*(f"{m['task']} {m['outcome']} {' '.join(m['tools'])}" for m in inputs.members))
    if unsupported(summary.common_task_pattern, shown):
        return "common_task_pattern shares no word with the turns shown"
    return ""


PURPOSE = Purpose(name=NAME, inputs=Inputs, render=_render, parse=_parse, offline=_offline, max_tokens=600, json=True,
                  answer=Answer, check=_check)
