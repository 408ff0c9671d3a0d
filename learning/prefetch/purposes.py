"""The turn-start auxiliary decisions: the memory relevance filter, the knowledge query, the episode summary.

Each is one Purpose with a real prompt, a parser and a deterministic offline heuristic that returns
the text a model would answer.
"""

from __future__ import annotations

import json
import re

from core.purposes import AnswerUnparseable, Purpose, parse_json_object, register, system_user

_WORD = re.compile(r"[a-z0-9][a-z0-9_\-]*")
STOPWORDS = frozenset(
    """a an and are as at be been but by can could did do does for from had has have how i if in into is it
    its me my of on or our please should so that the their them then there these they this to up us was we
    were what when where which who why will with would you your yes ok okay thanks hi hello hey just about
    any all can't cannot get got let lets make need needs new now one out see some than too very want""".split()
)
# A standing rule applies to work of its kind whatever the topic; a stated preference is about its person.
RULE_WORDS = frozenset({"always", "every", "never", "whenever", "must"})
# "Ana prefers ...", "Ana's team uses ...", "Ana is on vacation ...": a note about a person (or their team)
PERSON_NOTE = re.compile(r"^(?P<name>[A-Z][\w.-]*)(?:'s team)?(?:'s)?\s+(?:\w+\s+)?"
                         r"(?:prefers|likes|loves|enjoys|hates|dislikes|avoids|is|was|works|lives|uses|owns|"
                         r"has|wants|needs|asked|said|user|username|timezone|email)\b")


def content_words(text: str) -> set[str]:
    """Lower-cased words of three or more characters that are not stopwords."""
    return {w for w in _WORD.findall((text or "").lower()) if len(w) >= 3 and w not in STOPWORDS}


# ---- memory relevance filter ---------------------------------------------------------------------


def _render_filter(inputs: dict) -> list[dict]:
    notes = "\n".join(f"[{c['id']}] ({c['kind']}, written {c['written']}) {c['content']}" for c in inputs["candidates"])
    triggered = ", ".join(inputs.get("triggered_by") or []) or "no identifiable sender (an internal trigger)"
    return system_user(
        "You choose which of an agent's own notes bear on the task in front of it. A note bears on the task "
        "when it is about the task's subject, about a person who is party to the task, or is a standing rule "
        "that applies to work of this kind even though it is not about this topic. A note about a person "
        "applies only when that person is party to the task. Choose none when none bears on it; that is a "
        f"correct answer. Choose at most {inputs['max_selected']}. Answer with a JSON object "
        '{"selected": [note ids, most relevant first]} and nothing else.',
        f"Who triggered this turn: {triggered}\n\nWhat the task is about:\n{inputs['query']}\n\nThe notes:\n{notes}",
    )


def _about_someone_else(content: str, people: set[str]) -> bool:
    """A note about a person who is not party to the task (the spec: such a note does not apply)."""
    m = PERSON_NOTE.match(content or "")
    return bool(m) and m.group("name").lower() not in {"the", "this", "that", "our", "we"} and not (
        content_words(m.group("name")) & people)


def _offline_filter(inputs: dict) -> str:
    """Notes about the task's subject or naming who triggered it, most overlap first, then standing rules
    (always / never / every / whenever / must); a note about someone not party to the task never."""
    query = content_words(inputs["query"])
    people = set()
    for who in inputs.get("triggered_by") or []:
        people |= content_words(who)
    scored = []
    for position, candidate in enumerate(inputs["candidates"]):
        if _about_someone_else(candidate["content"], people):
            continue
        words = content_words(candidate["content"])
        overlap = len(words & query)
        about_party = bool(words & people)
        standing_rule = bool(set(_WORD.findall((candidate["content"] or "").lower())) & RULE_WORDS)
        if overlap or about_party:
            scored.append((0, -overlap - (2 if about_party else 0), position, candidate["id"]))
        elif standing_rule:
            scored.append((1, 0, position, candidate["id"]))
    scored.sort()
    return json.dumps({"selected": [item[3] for item in scored[: int(inputs["max_selected"])]]})


def _parse_filter(text: str) -> list[int]:
    value = parse_json_object("memory_relevance_filter", text)
    selected = value.get("selected")
    if not isinstance(selected, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in selected):
        raise AnswerUnparseable("memory_relevance_filter", '"selected" must be a list of note ids', text)
    return selected


MEMORY_RELEVANCE_FILTER = register(
    Purpose(
        name="memory_relevance_filter",
        render=_render_filter,
        parse=_parse_filter,
        offline=_offline_filter,
        max_tokens=200,
        json=True,
    )
)


# ---- knowledge query -----------------------------------------------------------------------------

KNOWLEDGE_QUERY_WORDS = 6


def _render_knowledge_query(inputs: dict) -> list[dict]:
    return system_user(
        "You turn what an agent was asked into a short plain-text keyword query for its team's knowledge "
        "base: the few words a page about this would contain. No operators, no quotes, no explanation; "
        "one line.",
        f"What the agent was asked:\n{inputs['ask']}\n\nKnowledge-base search query:",
    )


def _offline_knowledge_query(inputs: dict) -> str:
    """The ask's first distinct content words, in order."""
    seen: list[str] = []
    for word in _WORD.findall(inputs["ask"].lower()):
        if len(word) >= 3 and word not in STOPWORDS and word not in seen:
            seen.append(word)
        if len(seen) == KNOWLEDGE_QUERY_WORDS:
            break
    return " ".join(seen)


def _parse_knowledge_query(text: str) -> str:
    line = " ".join(text.strip().strip("`").split())
    line = line.removeprefix("Knowledge-base search query:").strip().strip("\"'")
    if not line:
        raise AnswerUnparseable("knowledge_query", "empty query", text)
    return line


KNOWLEDGE_QUERY = register(
    Purpose(
        name="knowledge_query",
        render=_render_knowledge_query,
        parse=_parse_knowledge_query,
        offline=_offline_knowledge_query,
        max_tokens=40,
    )
)


# ---- episode summary -----------------------------------------------------------------------------


def _render_episode_summary(inputs: dict) -> list[dict]:
    turns = "\n\n".join(
        f"Turn {i} ({t['when']}, {t['outcome'] or 'outcome unknown'}; tools: {', '.join(t['tools']) or 'none'})\n"
        f"Woken by: {t['woken_by']}\nAsked: {t['asked'] or '(nothing recorded)'}\nWhat it did: {t['what_it_did']}"
        for i, t in enumerate(inputs["turns"], 1)
    )
    return system_user(
        "You brief an agent on its own past turns that resemble the task it is starting. In a few sentences "
        "say what those turns were asked, what the agent did and how each ended, and what carries over to "
        "the new task. Name identifiers, tools and outcomes exactly; do not invent anything.",
        f"The new task:\n{inputs['ask']}\n\nThe past turns:\n{turns}",
    )


def _offline_episode_summary(inputs: dict) -> str:
    parts = []
    for t in inputs["turns"]:
        asked = t["asked"] or t["woken_by"]
        first = re.split(r"(?<=[.!?])\s+", " ".join(asked.split()))[0]
        tools = ", ".join(dict.fromkeys(t["tools"])) or "no tools"
        parts.append(f"On {t['when']} you were asked: {first} It ended {t['outcome'] or 'unknown'} using {tools}.")
    return " ".join(parts)


def _parse_episode_summary(text: str) -> str:
    cleaned = text.strip()
    if not cleaned:
        raise AnswerUnparseable("episode_summary", "empty briefing", text)
    return cleaned


EPISODE_SUMMARY = register(
    Purpose(
        name="episode_summary",
        render=_render_episode_summary,
        parse=_parse_episode_summary,
        offline=_offline_episode_summary,
        max_tokens=400,
    )
)
