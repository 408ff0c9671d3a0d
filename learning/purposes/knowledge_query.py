"""``knowledge_query``: what the agent was asked, as a short keyword query for the team's knowledge base.

A free-text answer: its thinking, a preamble ("Here is the query:"), quotes and fences are taken
off, and the first line that is left is the query. "NOOP" or "none" means nothing worth searching
(an empty query); an answer still empty after cleaning is unparseable, never searched for.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from core.answers import stems, unsupported, without_thinking
from core.purposes import AnswerUnparseable, Purpose, says_nothing, system_user
from core.words import content_words

NAME = "knowledge_query"
_PREAMBLE = re.compile(
    r"^(?:(?:here(?:'s| is)|sure|okay|ok)[^:\n]*:|(?:the\s+)?(?:knowledge[- ]base\s+)?(?:search\s+)?(?:query|keywords)\s*(?:is)?\s*:)\s*",
    re.I,
)
KNOWLEDGE_QUERY_WORDS = 6


class Inputs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ask: str  # what the agent was asked


def _render_knowledge_query(inputs: Inputs) -> list[dict]:
    return system_user(
        "You turn what an agent was asked into a short plain-text keyword query for its team's knowledge "
        "base: the few words a page about this would contain. No operators, no quotes, no explanation; "
        "one line. If nothing in it is worth searching for, answer NOOP.",
        f"What the agent was asked:\n{inputs.ask}\n\nKnowledge-base search query:",
    )


def _offline_knowledge_query(inputs: Inputs) -> str:
    """The ask's first distinct content words, in order."""
    return " ".join(content_words(inputs.ask)[:KNOWLEDGE_QUERY_WORDS])


def _parse_knowledge_query(text: str) -> str:
    if says_nothing(text):
        return ""
    lines = [line.strip().strip("`").strip() for line in without_thinking(text).splitlines()]
    lines = [_PREAMBLE.sub("", line).strip().strip("\"'`*").strip() for line in lines if line and not line.startswith("```")]
    line = " ".join(next((line for line in lines if line), "").split())
    if not line:
        raise AnswerUnparseable(NAME, "empty query", text)
    return "" if says_nothing(line) else line


def _check(query: str, inputs: Inputs) -> str:
    """A query searches for what was asked: it shares a word with the ask."""
    if query and unsupported(query, stems(inputs.ask)):
        return f"the query {query[:60]!r} shares no word with what the agent was asked"
    return ""


PURPOSE = Purpose(
    name=NAME, inputs=Inputs, render=_render_knowledge_query, parse=_parse_knowledge_query,
    offline=_offline_knowledge_query, max_tokens=120, check=_check,
)
