"""Proving a model before a role trusts it: one small real request per purpose, through the seam.

``probe(seat=..., aliases=...)`` sends every listed purpose one small, realistic question (the
``PROBE_INPUTS`` below) through ``core.aux.call`` at stage ``operator``, so each request is charged
and recorded like any other, and reports per purpose whether the answer parsed, how it ended
(the provider's finish reason, or the error kind), the latency and the tokens.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core import aux, purposes
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


@dataclass(frozen=True)
class ProbeResult:
    purpose: str
    parsed: bool
    ended: str  # the finish reason of an answer, or the error kind
    latency_ms: int
    input_tokens: int
    output_tokens: int
    provider: str
    detail: str = ""


def probe(*, seat: Seat, aliases: list[str] | None = None, names: list[str] | None = None) -> list[ProbeResult]:
    """One charged ``operator`` request per purpose (all listed ones unless ``names``)."""
    results = []
    for name in names or list(purposes.all_purposes()):
        started = time.monotonic()
        try:
            answer = aux.call(seat=seat, stage="operator", purpose=name, inputs=PROBE_INPUTS[name], aliases=aliases)
        except purposes.AnswerUnparseable as exc:
            results.append(_failed(name, started, "unparseable", exc.reason, exc))
        except ProviderError as exc:
            results.append(_failed(name, started, exc.kind, str(exc), exc))
        else:
            results.append(ProbeResult(name, True, answer.finish, _ms(started), answer.input_tokens,
                                       answer.output_tokens, answer.provider))
    return results


def _failed(name, started, kind, detail, exc) -> ProbeResult:
    finish = getattr(exc, "finish", "") or ""
    ended = f"{kind} ({finish})" if finish and finish not in kind else kind
    return ProbeResult(name, False, ended, _ms(started), getattr(exc, "input_tokens", 0) or 0,
                       getattr(exc, "output_tokens", 0) or 0, getattr(exc, "provider", ""), " ".join(detail.split())[:160])


def _ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)
