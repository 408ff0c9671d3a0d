"""``condense``: one passage of an agent's work record rewritten within a byte bound.

A free-text answer, whitespace folded; a reasoning model's thinking is taken off. The bound is
checked by code (``learning.memory.condensation``): an answer over it is asked again once, told its size.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from core.answers import stems, unsupported, without_thinking
from core.purposes import AnswerUnparseable, Purpose, system_user

NAME = "condense"


def nbytes(text: str) -> int:
    return len(text.encode("utf-8"))


class Inputs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str
    max_bytes: int  # the bound the condensed passage is held to
    kind: str = ""  # what the passage is
    previous_bytes: int = 0  # the size of a first answer over the bound, told on the retry


def _render(inputs: Inputs) -> list[dict]:
    return system_user(
        "You condense one passage from an agent's work record so it can be read at a glance. Keep every "
        "name, identifier, number, error and decision that matters; drop repetition and boilerplate. "
        f"Answer with the condensed passage only, on one line, in at most {inputs.max_bytes} bytes "
        f"(about {max(1, inputs.max_bytes // 7)} words).{_retry_note(inputs)}",
        f"What this passage is: {inputs.kind or 'a passage'}\n\nPassage:\n{inputs.text}",
    )


def _retry_note(inputs: Inputs) -> str:
    if not inputs.previous_bytes:
        return ""
    return (
        f" Your previous condensation was {inputs.previous_bytes} bytes, over the bound: keep only the "
        "names, identifiers and the outcome."
    )


def _offline(inputs: Inputs) -> str:
    """Extractive: the first sentence, then the last, whitespace folded, within the byte bound."""
    text = re.sub(r"\s+", " ", inputs.text).strip()
    sentences = re.split(r"(?<=[.!?])\s+", text)
    picked = sentences[0] if len(sentences) == 1 else f"{sentences[0]} … {sentences[-1]}"
    budget = inputs.max_bytes
    if nbytes(picked) > budget:
        words, out = picked.split(), ""
        for word in words:
            candidate = f"{out} {word}".strip()
            if nbytes(candidate) + nbytes(" …") > budget:
                break
            out = candidate
        picked = out + " …"
    return picked


def _parse(text: str) -> str:
    cleaned = " ".join(without_thinking(text).split())
    if not cleaned:
        raise AnswerUnparseable(NAME, "empty answer", text)
    return cleaned


def _check(condensed: str, inputs: Inputs) -> str:
    """A condensed passage keeps words of the passage."""
    return "the answer shares no word with the passage" if unsupported(condensed, stems(inputs.text)) else ""


PURPOSE = Purpose(name=NAME, inputs=Inputs, render=_render, parse=_parse, offline=_offline, max_tokens=400,
                  echo_of=("kind",), check=_check)


