"""Realistic answers for every purpose, in the styles of the model families a role may point at.

``openai``: the JSON object alone (JSON mode). ``anthropic``: a sentence of prose, the object in a
```json fence, a remark after it. ``local``: a small local instruction model: a bare fence,
capitalised keys, numbers and booleans as strings, lists as comma-separated strings. ``reasoning``:
a ``<think>`` block first, with braces in its thought. ``noop``: the purpose's own words for nothing.
``truncated``: the answer cut off at its budget mid-JSON or mid-sentence. Each case names what the
real parser must make of it: ``Parsed(check)`` (``check(value)`` is true) or ``UNPARSEABLE``.

``IDEAL[purpose]`` is each purpose's clean answer: the fake server's responder in the probe answers it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from learning.purposes.artifact_classify import Classification
from learning.purposes.skill_refinement import Refinement

UNPARSEABLE = "unparseable"


@dataclass(frozen=True)
class Case:
    style: str
    text: str
    expect: Any  # Callable[[value], bool] or UNPARSEABLE


BODY = "# Triage a flaky test\n\n## When to use\nA CI test fails now and then.\n\n## Steps\n1. Call `ci_history`.\n2. Call `rerun`."

IDEAL = {
    "persist_decision": '{"classification": "LONG", "content": "Ana prefers short answers.", "ttl_days": null, "reason": "a stated preference"}',
    "profile_update": '{"communication_style": "Terse, direct.", "past_decisions": ["Ana chose Postgres."], "sensitivities": [], "topics": ["billing"]}',
    "skill_draft": '{"name": "triage-flaky-test", "summary": "Triage a flaky CI test.", "body": "# Triage\\n\\n## Steps\\n1. Call `ci_history`."}',
    "skill_refinement": '{"noop": true}',
    "memory_relevance_filter": '{"selected": [41, 7]}',
    "knowledge_query": "release checklist staging deploy",
    "episode_summary": "On 2025-06-02 you were asked to ship release 4.2; it ended done using deploy and notify.",
    "condense": "Deploy of 4.2 failed on migration 0042; rolled back; Ana approved the retry.",
    "compaction_summary": '{"common_task_pattern": "Shipping releases", "common_outcome": "Most ended done.", "subjects_involved": ["Ana", "deploy"], "notable_patterns": "Migrations failed twice."}',
    "skill_promotion_draft": '{"name": "Release", "summary": "How the team ships a release.", "when_to_use": "Before a release.", "steps": ["Call deploy.", "Call notify."]}',
    "transcript_shards": '{"shards": [{"lesson": "The test suite needs the database container running first."}]}',
    "transcript_judge": '{"kept": true, "reason": "general and supported"}',
    "artifact_classify": '{"items": [{"id": 1, "tier": "rule", "scope": "tests"}]}',
    "artifact_draft": '{"name": "run-tests", "description": "How to run the tests.", "body": "Start the database first."}',
}


def _is(expected):
    return lambda value: value == expected


def _has(**fields):
    return lambda value: all(getattr(value, k) == v for k, v in fields.items())


CORPUS: dict[str, list[Case]] = {
    "persist_decision": [
        Case("openai", IDEAL["persist_decision"], _has(classification="LONG", content="Ana prefers short answers.")),
        Case(
            "anthropic",
            'Looking at this turn, Ana stated a durable preference.\n\n```json\n{"classification": "LONG", "content": '
            '"Ana prefers short answers.", "ttl_days": null, "reason": "stated"}\n```\n\nThis belongs in the diary.',
            _has(classification="LONG", content="Ana prefers short answers."),
        ),
        Case(
            "local",
            '```\n{"Classification": "short", "Content": "Ana is on vacation until 2025-07-14.", "TTL_Days": "5 days", '
            '"Reason": "dated"}\n```',
            _has(classification="SHORT", ttl_days=5),
        ),
        Case(
            "reasoning",
            '<think>Ana said {short answers}. Is that durable? It is a preference, but it is already in the notes.</think>\n'
            '{"classification": "NOOP", "content": "", "ttl_days": null, "reason": "already noted"}',
            _has(classification="NOOP", content=""),
        ),
        Case("noop", "NOOP", _has(classification="NOOP", skill_actions=[])),
        Case("noop", "**NOOP**.", _has(classification="NOOP")),
        Case(
            "openai",
            '{"classification": "DOC", "content": "The team deploys on Tuesdays.", "ttl_days": null, "reason": "team", '
            '"skill_actions": [{"action": "read", "name": "deploy"}, "patch the deploy skill"]}',
            _has(classification="DOC", skill_actions=[{"action": "read", "name": "deploy"}]),
        ),
        Case("local", '{"classification": "SHORT", "content": "Freeze this week.", "ttl_days": "soon"}', UNPARSEABLE),
        Case("truncated", '{"classification": "LONG", "content": "Ana prefers sh', UNPARSEABLE),
    ],
    "profile_update": [
        Case("openai", IDEAL["profile_update"], _has(topics=["billing"], past_decisions=["Ana chose Postgres."])),
        Case(
            "local",
            '```json\n{"Communication_Style": "Short messages.", "Past_Decisions": "Chose Postgres, Approved the freeze", '
            '"Sensitivities": "", "Topics": "billing, invoices"}\n```',
            _has(past_decisions=["Chose Postgres", "Approved the freeze"], sensitivities=[], topics=["billing", "invoices"]),
        ),
        Case(
            "anthropic",
            'Here is what these messages add:\n{"communication_style": "", "past_decisions": [], "sensitivities": '
            '["Dislikes pings after 6pm."], "topics": []}',
            _has(communication_style="", sensitivities=["Dislikes pings after 6pm."]),
        ),
        Case("noop", "none", _has(communication_style="", past_decisions=[], topics=[])),
        Case(  # the whole profile again, not a delta: held to the prompt's bound of five new items a list
            "local", '{"topics": ["a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8"]}', _has(topics=["a1", "a2", "a3", "a4", "a5"])
        ),
        Case("truncated", '{"communication_style": "Terse", "past_decisions": ["Ana chose Post', UNPARSEABLE),
    ],
    "skill_draft": [
        Case("openai", IDEAL["skill_draft"], _has(name="triage-flaky-test", decline=False, missing=[])),
        Case(
            "anthropic",
            "This run is a repeatable procedure.\n\n```json\n{\"name\": \"triage-flaky-test-POC-518\", \"summary\": "
            "\"Triage a flaky CI test.\", \"body\": \"" + BODY + "\"}\n```",  # raw newlines inside the body string
            _has(name="triage-flaky-test", decline=False, missing=[]),
        ),
        Case(
            "local",
            '{"Name": "Release notes v2.3 for 2025-06-02", "Description": "Write release notes.", "Body": "# Notes"}',
            _has(name="release-notes-for", summary="Write release notes.", decline=False),
        ),
        Case("reasoning", '<think>Is this a procedure? {maybe}</think>{"decline": "true", "reason": "one-off"}', _has(decline=True)),
        Case("noop", "None.", _has(decline=True)),
        Case("openai", '{"name": "x", "summary": ""}', _has(missing=["summary", "body"])),
        Case("truncated", '{"name": "triage-flaky-test", "summary": "Triage a flaky CI test.", "body": "# Tri', UNPARSEABLE),
    ],
    "skill_refinement": [
        Case("openai", '{"skill": "deploy", "observation": "The run also needed `notify` after `deploy`."}', _has(noop=False, skill="deploy")),
        Case("noop", "NOOP", _is(Refinement(noop=True))),
        Case("noop", "`NOOP`", _is(Refinement(noop=True))),
        Case("local", '{"Noop": "true"}', _is(Refinement(noop=True))),
        Case("local", '{"skill": "NOOP", "observation": ""}', _is(Refinement(noop=True))),
        Case("anthropic", "Nothing new was learned.\n\n```json\n{\"noop\": true}\n```", _is(Refinement(noop=True))),
        Case("reasoning", "<think>The deploy skill already says this.</think>\nNOOP", _is(Refinement(noop=True))),
        Case("openai", '{"skill": "deploy"}', UNPARSEABLE),
        Case("truncated", '{"skill": "deploy", "observation": "The run al', UNPARSEABLE),
    ],
    "memory_relevance_filter": [
        Case("openai", IDEAL["memory_relevance_filter"], _is([41, 7])),
        Case("local", '{"selected": ["41", "7"]}', _is([41, 7])),
        Case("local", '{"Selected": "41, 7"}', _is([41, 7])),
        Case("anthropic", 'Two notes bear on it:\n```json\n{"selected": [41, "note 9", 7]}\n```', _is([41, 7])),
        Case("reasoning", "<think>Note 41 {about billing} matters.</think>{\"selected\": [41]}", _is([41])),
        Case("noop", '{"selected": []}', _is([])),
        Case("noop", "none", _is([])),
        Case("truncated", '{"selected": [41, ', UNPARSEABLE),
    ],
    "knowledge_query": [
        Case("openai", IDEAL["knowledge_query"], _is("release checklist staging deploy")),
        Case("anthropic", "Here is the query: release checklist staging", _is("release checklist staging")),
        Case("local", '"release checklist staging"', _is("release checklist staging")),
        Case("local", "```\nrelease checklist staging\n```", _is("release checklist staging")),
        Case("reasoning", "<think>They want the release steps.</think>\nrelease checklist", _is("release checklist")),
        Case("noop", "NOOP", _is("")),
        Case("truncated", "<think>They want the release", UNPARSEABLE),
    ],
    "episode_summary": [
        Case("openai", IDEAL["episode_summary"], _is(IDEAL["episode_summary"])),
        Case("reasoning", "<think>Two turns match.</think>\nYou shipped 4.2 twice; both ended done.", _is("You shipped 4.2 twice; both ended done.")),
        Case("truncated", "", UNPARSEABLE),
    ],
    "condense": [
        Case("openai", IDEAL["condense"], _is(IDEAL["condense"])),
        Case("local", "  Deploy of 4.2 failed;\n  rolled back. ", _is("Deploy of 4.2 failed; rolled back.")),
        Case("reasoning", "<think>Keep the ids.</think>Deploy 4.2 failed on 0042.", _is("Deploy 4.2 failed on 0042.")),
        Case("truncated", "<think>Keep the ids and", UNPARSEABLE),
    ],
    "compaction_summary": [
        Case("openai", IDEAL["compaction_summary"], _has(subjects_involved=["Ana", "deploy"])),
        Case(
            "local",
            '```json\n{"Common_Task_Pattern": "Shipping releases", "common_outcome": "done", "subjects_involved": "Ana, deploy, POC-518", "notable_patterns": ""}\n```',
            _has(common_task_pattern="Shipping releases", subjects_involved=["Ana", "deploy", "POC-518"]),
        ),
        Case("openai", '{"common_outcome": "done"}', UNPARSEABLE),
        Case("truncated", '{"common_task_pattern": "Shipping rel', UNPARSEABLE),
    ],
    "skill_promotion_draft": [
        Case("openai", IDEAL["skill_promotion_draft"], _has(steps=["Call deploy.", "Call notify."])),
        Case(
            "local",
            '{"Name": "Release", "Summary": "How the team ships.", "When_To_Use": "Before a release.", "Steps": "1. Call deploy.\\n2. Call notify."}',
            _has(steps=["1. Call deploy.", "2. Call notify."]),
        ),
        Case("anthropic", "I distilled the three skills.\n\n```json\n{\"summary\": \"\", \"steps\": []}\n```", UNPARSEABLE),
        Case("reasoning", '<think>Both skills {deploy, notify}.</think>{"summary": "Ship it.", "steps": ["Call deploy."]}',
             _has(summary="Ship it.", steps=["Call deploy."])),
        Case("truncated", '{"name": "Release", "summary": "How the team sh', UNPARSEABLE),
    ],
    "transcript_shards": [
        Case("openai", IDEAL["transcript_shards"], _is(["The test suite needs the database container running first."])),
        Case("noop", '{"shards": []}', _is([])),
        Case("noop", "none", _is([])),
        Case("local", '{"Shards": "none"}', _is([])),
        Case("local", '{"shards": ["Lesson one is a fact.", {"lesson": "Lesson two is a fact."}, 3, {"text": "x"}]}',
             _is(["Lesson one is a fact.", "Lesson two is a fact."])),
        Case("truncated", '{"shards": [{"lesson": "The test suite ne', UNPARSEABLE),
    ],
    "transcript_judge": [
        Case("openai", IDEAL["transcript_judge"], _has(kept=True)),
        Case("local", '{"kept": "false", "reason": "one session only"}', _has(kept=False)),
        Case("local", '{"Kept": "yes", "Reason": "general"}', _has(kept=True, reason="general")),
        Case("anthropic", 'My verdict:\n```json\n{"kept": false, "reason": "specific to one laptop"}\n```', _has(kept=False)),
        Case("openai", '{"reason": "no verdict"}', UNPARSEABLE),
        Case("truncated", '{"kept": tr', UNPARSEABLE),
    ],
    "artifact_classify": [
        Case("openai", IDEAL["artifact_classify"], _is({1: Classification(tier="rule", scope="tests")})),
        Case(
            "local",
            '{"items": [{"id": "1", "tier": "Rule", "scope": "tests"}, {"id": 2, "tier": "poem", "scope": "x"}, '
            '{"id": 3, "tier": "skill", "scope": ""}, {"id": 4, "tier": "HOOK", "scope": "commits"}]}',
            _is({1: Classification(tier="rule", scope="tests"), 4: Classification(tier="hook", scope="commits")}),
        ),
        Case("truncated", '{"items": [{"id": 1, "tier": "ru', UNPARSEABLE),
    ],
    "artifact_draft": [
        Case("openai", IDEAL["artifact_draft"], _has(name="run-tests", body="Start the database first.")),
        Case(
            "anthropic",
            "Here is the draft.\n\n```json\n{\"name\": \"run-tests\", \"summary\": \"How to run the tests.\", \"body\": \"# Run\n\n1. Start the database.\"}\n```",
            _has(description="How to run the tests.", body="# Run\n\n1. Start the database."),
        ),
        Case("truncated", '{"name": "run-tests", "description": "How to', UNPARSEABLE),
    ],
}

STYLES = ("openai", "anthropic", "local", "reasoning", "noop", "truncated")
