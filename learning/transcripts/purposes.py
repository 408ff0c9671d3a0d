"""The transcript loop's auxiliary decisions: shard extraction, the judge, tier classification, drafting.

Each is a ``Purpose`` with a real prompt, a parser that refuses a malformed answer, and an offline
heuristic that answers in the same JSON a model would. The heuristics are documented rules, not
models: good enough to run the whole loop with no key, and one setting away from a real model.
"""

from __future__ import annotations

import json
import re

from core.purposes import AnswerUnparseable, Purpose, parse_json_object, register, system_user
from learning.transcripts import lessons

SHARDS = "transcript_shards"
JUDGE = "transcript_judge"
CLASSIFY = "artifact_classify"
DRAFT = "artifact_draft"

TIERS = ("fact", "hook", "rule", "skill", "allowlist", "agent", "update", "delete")
MIN_LESSON_WORDS = lessons.MIN_LESSON_WORDS

# ---- shard extraction --------------------------------------------------------------------------

declarative = lessons.declarative


def offline_lessons(episode: dict) -> list[str]:
    """The lessons of one episode by rule (``learning.transcripts.lessons``): cause and fix, or the person's words."""
    if episode.get("kind") == "corrected":
        return lessons.correction_lessons(episode.get("correction", ""))
    if episode.get("kind") == "self_corrected":
        tool, attempt = _split(episode.get("attempt", ""))
        _tool, fix = _split(episode.get("correction", ""))
        lesson = lessons.failure_lesson(tool=tool, attempt=attempt, error=episode.get("failure") or "", fix=fix)
        return [lesson] if lesson else []
    return []


def _offline_shards(inputs: dict) -> str:
    return json.dumps({"shards": [{"lesson": lesson} for lesson in offline_lessons(inputs.get("episode") or {})]})


def _split(summary: str) -> tuple[str, str]:
    """``Tool: detail`` as its two parts."""
    tool, _, detail = (summary or "").partition(": ")
    return tool.strip(), detail.strip()


def _render_shards(inputs: dict) -> list[dict]:
    episode = inputs.get("episode") or {}
    return system_user(
        "You read one episode from a coding agent's session transcript: what it was asked, what it tried, "
        "what went wrong and how it was corrected. State each lesson a future agent in this repository should "
        "know as one sentence: the cause (from the informative lines of the error, not 'Exit code 1') and the "
        "fix, in general terms, so the same cause in another session reads alike: write paths, ids, hashes, "
        "branch and file names as <path>, <id>, <hash>, <name>. Keep a person's negative instructions "
        f"(\"don't ...\"). At most {lessons.MAX_LESSON_CHARS} characters a lesson. Not a summary of the session, "
        "no secrets. If there is no lesson, return none. "
        'Answer JSON only: {"shards": [{"lesson": "..."}]}',
        json.dumps({k: episode.get(k, "") for k in ("kind", "ask", "attempt", "failure", "correction")}, indent=1),
    )


def _parse_shards(text: str) -> list[str]:
    data = parse_json_object(SHARDS, text)
    shards = data.get("shards")
    if not isinstance(shards, list):
        raise AnswerUnparseable(SHARDS, "no 'shards' list", text)
    out = []
    for item in shards:
        lesson = item.get("lesson") if isinstance(item, dict) else item
        if not isinstance(lesson, str):
            raise AnswerUnparseable(SHARDS, "a shard without a 'lesson' string", text)
        lesson = lessons.bounded(lesson)  # a model's multi-KB "lesson" is refused, not stored
        if lesson:
            out.append(lesson)
    return out


# ---- the judge ---------------------------------------------------------------------------------

_SPECIFIC = re.compile(r"\b(this session|just now|today|yesterday|above|earlier in)\b", re.I)


def _offline_judge(inputs: dict) -> str:
    """Keep a lesson that is a declarative general statement with evidence beyond its own session."""
    lesson = str(inputs.get("lesson") or "")
    evidence = inputs.get("evidence") or {}
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


def _render_judge(inputs: dict) -> list[dict]:
    return system_user(
        "You are an independent judge of candidate lessons learned from coding-agent transcripts. You did not "
        "write this lesson. Keep it only if it is true in general for this repository, stated as a fact, useful "
        "to a future agent, and supported by the evidence; a lesson repeated within one session is not evidence. "
        'Declining is a normal answer. Answer JSON only: {"kept": true|false, "reason": "..."}',
        json.dumps({"lesson": inputs.get("lesson"), "evidence": inputs.get("evidence"), "episode": inputs.get("episode")}, indent=1),
    )


def _parse_judge(text: str) -> dict:
    data = parse_json_object(JUDGE, text)
    if not isinstance(data.get("kept"), bool):
        raise AnswerUnparseable(JUDGE, "'kept' must be true or false", text)
    return {"kept": data["kept"], "reason": str(data.get("reason") or "")}


# ---- tier classification -----------------------------------------------------------------------

_TIER_RULES = (
    ("delete", re.compile(r"\b(obsolete|no longer (?:needed|true|applies|used)|remove the (?:rule|hook|skill))\b", re.I)),
    ("update", re.compile(r"\b(has changed|now (?:uses|runs|lives)|was renamed|moved to)\b", re.I)),
    ("hook", re.compile(r"\b(?:before|after) (?:every|each|any) (?:commit|push|edit|write|tool call|change|model edit)\b", re.I)),
    ("allowlist", re.compile(r"\b(safe to run|always allowed|without asking|no need to ask|pre-?approved?)\b", re.I)),
    ("agent", re.compile(r"\b(delegate|subagent|sub-agent|separate agent|reviewer agent)\b", re.I)),
    ("skill", re.compile(r"\b(steps?:|checklist|procedure|how to|(?:is )?done only when|first\b.+\bthen)\b", re.I)),
    ("rule", re.compile(r"\b(never|always|must|do not|don't|only)\b", re.I)),
)
_TOPIC = re.compile(r"^\s*((?:[\w\-]+\s+){0,4}[\w\-]+)\s*:\s+\S")
_BACKTICK = re.compile(r"`([^`]+)`")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-]+")
_STOP = {"the", "a", "an", "is", "are", "in", "on", "of", "to", "here", "with", "and", "or", "for", "this", "that", "it"}


def offline_tier(text: str) -> str:
    for tier, pattern in _TIER_RULES:
        if pattern.search(text):
            return tier
    return "fact"


def offline_scope(text: str) -> str:
    """The lesson's topic: a short lead-in before a colon, else its first command, else its first words."""
    topic = _TOPIC.match(text)
    if topic:
        return topic.group(1).strip()
    command = _BACKTICK.search(text)
    if command:
        return " ".join(command.group(1).split()[:3])
    words = [w for w in _WORD.findall(text) if w.lower() not in _STOP]
    return " ".join(words[:3])


def _offline_classify(inputs: dict) -> str:
    items = [
        {"id": item["id"], "tier": offline_tier(item["text"]), "scope": offline_scope(item["text"])}
        for item in inputs.get("lessons") or []
    ]
    return json.dumps({"items": items})


def _render_classify(inputs: dict) -> list[dict]:
    return system_user(
        "Classify each published lesson into the artifact that would shape the next agent's run: fact (a line "
        "of project knowledge), hook (an automatic check the harness runs), rule (an instruction in CLAUDE.md), "
        "skill (a reusable procedure), allowlist (a command safe to run without asking), agent (a specialised "
        "subagent), update (an existing artifact is now wrong), delete (an existing artifact should go). Give each "
        "a short scope naming what it is about. "
        'Answer JSON only: {"items": [{"id": 1, "tier": "...", "scope": "..."}]}',
        json.dumps(inputs.get("lessons") or [], indent=1),
    )


def _parse_classify(text: str) -> dict[int, dict]:
    data = parse_json_object(CLASSIFY, text)
    items = data.get("items")
    if not isinstance(items, list):
        raise AnswerUnparseable(CLASSIFY, "no 'items' list", text)
    out = {}
    for item in items:
        if not isinstance(item, dict) or item.get("tier") not in TIERS or not str(item.get("scope") or "").strip():
            raise AnswerUnparseable(CLASSIFY, f"an item needs a tier from {', '.join(TIERS)} and a scope", text)
        try:
            out[int(item["id"])] = {"tier": item["tier"], "scope": str(item["scope"]).strip()}
        except (KeyError, TypeError, ValueError):
            raise AnswerUnparseable(CLASSIFY, "an item without an integer 'id'", text) from None
    return out


# ---- drafting ----------------------------------------------------------------------------------


def _offline_draft(inputs: dict) -> str:
    lessons = [str(x) for x in inputs.get("lessons") or []]
    name = inputs.get("name") or "lesson"
    description = lessons[0] if lessons else name
    body = "\n".join(f"- {lesson}" for lesson in lessons)
    return json.dumps({"name": name, "description": description, "body": body})


def _render_draft(inputs: dict) -> list[dict]:
    return system_user(
        f"Draft the body of a Claude Code {inputs.get('tier')} artifact named {inputs.get('name')!r} that teaches the "
        "lessons below to the next agent. Plain, specific, no filler; the file's front matter is added for you. "
        'Answer JSON only: {"name": "kebab-case", "description": "one line", "body": "markdown or script"}',
        json.dumps({"scope": inputs.get("scope"), "lessons": inputs.get("lessons"), "existing": inputs.get("existing", "")}, indent=1),
    )


def _parse_draft(text: str) -> dict:
    data = parse_json_object(DRAFT, text)
    for key in ("name", "description", "body"):
        if not isinstance(data.get(key), str):
            raise AnswerUnparseable(DRAFT, f"'{key}' must be a string", text)
    return {key: data[key] for key in ("name", "description", "body")}


register(Purpose(SHARDS, _render_shards, _parse_shards, _offline_shards, max_tokens=400, json=True))
register(Purpose(JUDGE, _render_judge, _parse_judge, _offline_judge, max_tokens=200, json=True))
register(Purpose(CLASSIFY, _render_classify, _parse_classify, _offline_classify, max_tokens=800, json=True))
register(Purpose(DRAFT, _render_draft, _parse_draft, _offline_draft, max_tokens=1200, json=True))
