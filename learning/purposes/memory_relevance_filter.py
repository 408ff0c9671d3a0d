"""``memory_relevance_filter``: which of the agent's own notes bear on the task in front of it.

The answer is ``{"selected": [note ids]}``; ids quoted as strings count, an id that is not a
number is dropped on its own, and "none" (the prompt's word for nothing) is an empty selection.
Its offline answer compares content words (``core.words``, the one definition every purpose shares).
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict

from core import words as vocabulary
from core.answers import Batch
from core.purposes import Purpose, read_json, says_nothing, system_user

# A standing rule applies to work of its kind whatever the topic; a stated preference is about its person.
RULE_WORDS = frozenset({"always", "every", "never", "whenever", "must"})
# "Ana prefers ...", "Ana's team uses ...", "Ana is on vacation ...": a note about a person (or their team)
# (a handle as it is written: "ana_k_42 prefers ...")
PERSON_NOTE = re.compile(r"^(?P<name>[A-Z][\w.-]*|[a-z][\w.-]*[_\d][\w.-]*)(?:'s team)?(?:'s)?\s+(?:\w+\s+)?"
                         r"(?:prefers|likes|loves|enjoys|hates|dislikes|avoids|is|was|works|lives|uses|owns|"
                         r"has|wants|needs|asked|said|user|username|timezone|email)\b")


def content_words(text: str) -> set[str]:
    return set(vocabulary.content_words(text))


NAME = "memory_relevance_filter"


class Inputs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str  # what the task is about
    candidates: list[dict[str, Any]]  # the notes, each {"id", "kind", "written", "content"}
    max_selected: int
    triggered_by: list[str] = []  # who triggered the turn, each "name (platform)"


def _render_filter(inputs: Inputs) -> list[dict]:
    notes = "\n".join(f"[{c['id']}] ({c['kind']}, written {c['written']}) {c['content']}" for c in inputs.candidates)
    triggered = ", ".join(inputs.triggered_by) or "no identifiable sender (an internal trigger)"
    return system_user(
        "You choose which of an agent's own notes bear on the task in front of it. A note bears on the task "
        "when it is about the task's subject, about a person who is party to the task, or is a standing rule "
        "that applies to work of this kind even though it is not about this topic. A note about a person "
        "applies only when that person is party to the task. Choose none when none bears on it; that is a "
        f"correct answer. Choose at most {inputs.max_selected}. Answer with a JSON object "
        '{"selected": [note ids, most relevant first]} and nothing else.',
        f"Who triggered this turn: {triggered}\n\nWhat the task is about:\n{inputs.query}\n\nThe notes:\n{notes}",
    )


@functools.lru_cache(maxsize=8192)
def _read_note(content: str) -> tuple[frozenset[str] | None, frozenset[str], bool]:
    """What the offline filter reads of a note, once per text (a seat's notes are the candidates of
    every turn start): the content words of the person it is about (None when it is about nobody in
    particular), its content words, and whether it states a standing rule."""
    m = PERSON_NOTE.match(content)
    person = None
    if m is not None and m.group("name").lower() not in {"the", "this", "that", "our", "we"}:
        person = frozenset(content_words(m.group("name")))
    return person, frozenset(content_words(content)), bool(set(vocabulary.words(content)) & RULE_WORDS)


def _offline_filter(inputs: Inputs) -> str:
    """Notes about the task's subject or naming who triggered it, most overlap first, then standing rules
    (always / never / every / whenever / must); a note about someone not party to the task never."""
    query = content_words(inputs.query)
    people = set()
    for who in inputs.triggered_by:
        people |= content_words(who)
    scored = []
    for position, candidate in enumerate(inputs.candidates):
        person, words, standing_rule = _read_note(candidate["content"] or "")
        if person is not None and not (person & people):
            continue
        overlap = len(words & query)
        about_party = bool(words & people)
        if overlap or about_party:
            scored.append((0, -overlap - (2 if about_party else 0), position, candidate["id"]))
        elif standing_rule:
            scored.append((1, 0, position, candidate["id"]))
    scored.sort()
    return json.dumps({"selected": [item[3] for item in scored[: inputs.max_selected]]})


class Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    selected: Batch[int] = []


def _parse_filter(text: str) -> list[int]:
    if says_nothing(text):
        return []
    return [i for i in read_json(NAME, text, Answer).selected if not isinstance(i, bool)]


def _check(selected: list[int], inputs: Inputs) -> str:
    """A selection names notes that were shown (an invented id beside them is dropped by the caller)."""
    shown = {c["id"] for c in inputs.candidates}
    if selected and not shown.intersection(selected):
        return f"selected only note ids that were not shown: {selected[:5]}"
    return ""


PURPOSE = Purpose(
    name=NAME, inputs=Inputs, render=_render_filter, parse=_parse_filter, offline=_offline_filter, max_tokens=400,
    json=True, answer=Answer, check=_check,
)
