"""Proving a model before a role trusts it: known made-up cases per purpose, with expected decisions.

``probe(seat=..., aliases=...)`` sends every listed purpose its ``CASES`` (the first case's inputs
are ``PROBE_INPUTS``) through ``core.auxiliary.call`` at stage ``operator``, so each request is charged
and recorded like any other, with no offline floor: what the model answered is what is judged.
Each case ends one of: ``correct`` (the expected decision), ``wrong`` (a usable answer, the wrong
decision), ``rejected`` (the purpose's meaning check refused it: template text, an echo, a value the
input cannot support), ``unparseable``, or the provider error's kind (``truncated``,
``context_overflow``, ...). A purpose the model got wholly right can be backed by it; any other
gets a verdict saying what to do instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core import auxiliary, purposes
from core.providers.errors import ProviderError

if TYPE_CHECKING:
    from crewlet.models import Seat

TURN = {
    "seat": "probe",
    "woken_by": "message",
    "asked": "Please keep release notes short; I prefer bullet points.",
    "interactions": [
        {"sender": "Ana", "sender_kind": "human", "body": "Please keep release notes short; I prefer bullet points."}
    ],
    "what_it_did": "Drafted the 4.2 release notes as five bullet points and posted them.",
    "outcome": "done",
    "failure_set_by": "",
    "failure_reason": "",
    "tool_sequence": ["read_changelog", "draft_notes", "post_message"],
    "tool_calls": 3,
    "today": "2025-06-02",
}
SKILL = {
    "name": "release-notes",
    "description": "Write release notes from the changelog.",
    "body": "# Release notes\n\n## Steps\n1. Call `read_changelog`.\n2. Call `draft_notes`.",
    "tool_sequence": ["read_changelog", "draft_notes"],
}
EPISODE = {
    "kind": "corrected",
    "ask": "run the tests",
    "attempt": "Bash: pytest",
    "failure": "could not connect to database",
    "correction": "No, start the database container first with make db, then run pytest.",
}

PROBE_INPUTS: dict[str, dict] = {
    "persist_decision": {**TURN, "recent_notes": []},
    "profile_update": {
        "seat": "probe", "subject": "Ana", "platform": "slack", "woken_by": "message",
        "messages": [TURN["asked"]], "existing": {"communication_style": "", "past_decisions": [], "sensitivities": [], "topics": []},
    },
    "skill_draft": {**TURN, "mode": "inline", "prior_runs": 2, "existing_skills": []},
    "skill_refinement": {**TURN, "skills": [SKILL]},
    "memory_relevance_filter": {
        "candidates": [
            {"id": 41, "kind": "long", "written": "2025-05-01", "content": "Ana prefers bullet points in release notes."},
            {"id": 7, "kind": "long", "written": "2025-05-03", "content": "The staging cluster is called kestrel."},
        ],
        "triggered_by": ["Ana"], "query": TURN["asked"], "max_selected": 5,
    },
    "knowledge_query": {"ask": "How do we cut a release and publish the notes?"},
    "episode_summary": {
        "ask": "Write the release notes for 4.3.",
        "turns": [{"when": "2025-05-20", "outcome": "done", "tools": TURN["tool_sequence"], "woken_by": "message",
                   "asked": "Write the release notes for 4.2.", "what_it_did": TURN["what_it_did"]}],
    },
    "condense": {
        "text": "The deploy of release 4.2 to staging failed at migration 0042 because the column already existed; "
                "the agent rolled back, asked Ana, who approved a retry with the migration faked, and the retry landed.",
        "max_bytes": 120, "kind": "the outcome of one past turn",
    },
    "compaction_summary": {
        "members": [
            {"date": "2025-05-01", "ended": "done", "task": "Write release notes for 4.1", "outcome": "Posted.", "tools": ["draft_notes"]},
            {"date": "2025-05-20", "ended": "done", "task": "Write release notes for 4.2", "outcome": "Posted.", "tools": ["draft_notes"]},
        ]
    },
    "skill_promotion_draft": {
        "unit": "platform", "tools": SKILL["tool_sequence"], "sibling_count": 2, "distinct_agents": 2,
        "skills": [{**SKILL, "seat": "ana-bot"}, {**SKILL, "seat": "bo-bot"}],
    },
    "transcript_shards": {"episode": EPISODE},
    "transcript_judge": {
        "lesson": "The test suite needs the database container running first (make db).",
        "evidence": {"distinct_sources": 2}, "episode": EPISODE,
    },
    "artifact_classify": {"lessons": [{"id": 1, "text": "Never run the migrations against production by hand."}]},
    "artifact_draft": {
        "tier": "rule", "name": "database-first", "scope": "tests",
        "lessons": ["The test suite needs the database container running first (make db)."], "existing": "",
    },
}


def _said(value: Any, *words: str) -> bool:
    text = str(value).lower()
    return any(word in text for word in words)


@dataclass(frozen=True)
class Case:
    what: str  # the decision expected, as the report says it
    inputs: dict
    expect: Callable[[Any], bool]


def _turn(body: str, **fields) -> dict:
    return {**TURN, "asked": body, "interactions": [{"sender": "Ana", "sender_kind": "human", "body": body}],
            "recent_notes": [], **fields}


CASES: dict[str, list[Case]] = {
    "persist_decision": [
        Case("a stated preference is a LONG note naming it", PROBE_INPUTS["persist_decision"],
             lambda v: v.classification == "LONG" and _said(v.content, "bullet")),
        Case("an instruction is not a note", _turn("Post the release notes in the channel now, please."),
             lambda v: v.classification not in ("LONG", "SHORT")),
        Case("a dated situation is a SHORT note", _turn("I'm on vacation from June 10 to June 20."),
             lambda v: v.classification == "SHORT" and _said(v.content, "vacation")),
    ],
    "profile_update": [
        Case("a stated preference is observed", PROBE_INPUTS["profile_update"],
             lambda v: _said(v, "bullet", "short")),
        Case("thanks decide nothing", {**PROBE_INPUTS["profile_update"], "messages": ["Thanks!"]},
             lambda v: not v.past_decisions and not v.sensitivities),
    ],
    "skill_draft": [
        Case("a repeated tool run is a skill named for the work", PROBE_INPUTS["skill_draft"],
             lambda v: not v.decline and _said(v.name, "release", "note", "changelog")),
        Case("a first one-tool run is declined",
             {**PROBE_INPUTS["skill_draft"], "tool_sequence": ["post_message"], "prior_runs": 0},
             lambda v: v.decline),
    ],
    "skill_refinement": [
        Case("a turn that followed the steps teaches nothing",
             {**PROBE_INPUTS["skill_refinement"], "tool_sequence": SKILL["tool_sequence"]},
             lambda v: v.noop),
    ],
    "memory_relevance_filter": [
        Case("the note about the person and the task is chosen", PROBE_INPUTS["memory_relevance_filter"],
             lambda v: v[:1] == [41] and 7 not in v),
    ],
    "knowledge_query": [
        Case("the query names the work", PROBE_INPUTS["knowledge_query"], lambda v: _said(v, "release")),
    ],
    "episode_summary": [
        Case("the briefing tells of the past release", PROBE_INPUTS["episode_summary"], lambda v: _said(v, "4.2")),
    ],
    "condense": [
        Case("the passage keeps its identifiers within the bound", PROBE_INPUTS["condense"],
             lambda v: len(v.encode()) <= PROBE_INPUTS["condense"]["max_bytes"] and _said(v, "4.2", "0042")),
    ],
    "compaction_summary": [
        Case("the pattern is the shared work", PROBE_INPUTS["compaction_summary"],
             lambda v: _said(v.common_task_pattern, "release")),
    ],
    "skill_promotion_draft": [
        Case("the page distils the release procedure", PROBE_INPUTS["skill_promotion_draft"],
             lambda v: _said(v, "release", "changelog")),
    ],
    "transcript_shards": [
        Case("the correction is the lesson", PROBE_INPUTS["transcript_shards"],
             lambda v: any(_said(lesson, "database", "make db") for lesson in v)),
    ],
    "transcript_judge": [
        Case("a general, supported lesson is kept", PROBE_INPUTS["transcript_judge"], lambda v: v.kept is True),
        Case("a lesson about one session is not kept",
             {**PROBE_INPUTS["transcript_judge"], "lesson": "Just now in this session the tests failed once.",
              "evidence": {"distinct_sources": 1}},
             lambda v: v.kept is False),
    ],
    "artifact_classify": [
        Case("a never-rule is a rule", PROBE_INPUTS["artifact_classify"], lambda v: 1 in v and v[1].tier == "rule"),
    ],
    "artifact_draft": [
        Case("the body teaches the lesson", PROBE_INPUTS["artifact_draft"], lambda v: _said(v.body, "database", "make db")),
    ],
}
OUTCOMES = ("correct", "wrong", "rejected", "unparseable", "failed")


@dataclass(frozen=True)
class CaseResult:
    what: str
    outcome: str  # correct | wrong | rejected | unparseable | an error kind (truncated, context_overflow, ...)
    detail: str = ""


@dataclass
class ProbeResult:
    purpose: str
    cases: list[CaseResult] = field(default_factory=list)
    latency_ms: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    provider: str = ""

    def count(self, outcome: str) -> int:
        if outcome == "failed":
            return sum(1 for c in self.cases if c.outcome not in OUTCOMES)
        return sum(1 for c in self.cases if c.outcome == outcome)

    @property
    def parsed(self) -> bool:
        """Every case answered usably (right or wrong)."""
        return all(c.outcome in ("correct", "wrong") for c in self.cases)

    @property
    def backs(self) -> bool:
        return all(c.outcome == "correct" for c in self.cases)

    @property
    def verdict(self) -> str:
        if self.backs:
            return "ok"
        if any(c.outcome.startswith("context_overflow") for c in self.cases):
            where = f"providers.llm.{self.provider}" if self.provider else "the provider"
            return (f"the prompt does not fit: set {where}.context_tokens to the server's context size (llama.cpp -c),"
                    " or start the server with a larger one")
        if any(c.outcome.startswith("truncated") for c in self.cases):
            # the budgets are sized from real models' answers with room: one past it is a runaway
            return (f"answers run past the token budget: this model cannot back {self.purpose}; use offline or a"
                    " larger model (a reasoning model: raise reasoning_tokens)")
        return f"this model cannot back {self.purpose}; use offline or a larger model"


def probe(*, seat: Seat, aliases: list[str] | None = None, names: list[str] | None = None) -> list[ProbeResult]:
    """Every case of every purpose (all listed ones unless ``names``), each one charged ``operator`` request."""
    results = []
    for name in names or list(purposes.all_purposes()):
        result = ProbeResult(name)
        started = time.monotonic()
        for case in CASES.get(name) or [Case("answers", PROBE_INPUTS[name], lambda v: True)]:
            result.cases.append(_run(seat, name, case, aliases, result))
        result.latency_ms = round((time.monotonic() - started) * 1000)
        results.append(result)
    return results


def _run(seat, name: str, case: Case, aliases, result: ProbeResult) -> CaseResult:
    try:
        answer = auxiliary.call(seat=seat, stage="operator", purpose=name, inputs=case.inputs, aliases=aliases,
                          offline_floor=False)
    except purposes.AnswerUnparseable as exc:
        _spent(result, exc)
        outcome = "rejected" if isinstance(exc, purposes.AnswerRejected) else "unparseable"
        return CaseResult(case.what, outcome, _short(exc.reason))
    except ProviderError as exc:
        _spent(result, exc)
        finish = getattr(exc, "finish", "") or ""
        kind = f"{exc.kind} ({finish})" if finish and finish not in exc.kind else exc.kind
        return CaseResult(case.what, kind, _short(str(exc)))
    _spent(result, answer)
    if case.expect(answer.value):
        return CaseResult(case.what, "correct")
    return CaseResult(case.what, "wrong", _short(f"answered {answer.value!r}"))


def _spent(result: ProbeResult, answered) -> None:
    result.provider = result.provider or getattr(answered, "provider", "") or ""
    result.input_tokens += getattr(answered, "input_tokens", 0) or 0
    result.output_tokens += getattr(answered, "output_tokens", 0) or 0


def _short(text: str) -> str:
    return " ".join(str(text).split())[:160]
