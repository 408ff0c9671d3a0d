"""``manage.py probe_model ROLE`` tells a working model from a broken one, against the fake OpenAI-compatible server."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from core import purposes
from core.models import Event
from crewlet.config import schema
from learning.purposes.probe import CASES
from tests.core.providers.helpers import OPENAI_KEY, OPENAI_KEY_ENV, openai_spec
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.purpose_responder import ideal_answers

PURPOSES = 14
CASE_COUNT = sum(len(cases) for cases in CASES.values())

# what a model that decides right answers each case, in CASES' order
RIGHT = {
    "persist_decision": [
        {"classification": "LONG", "content": "Ana prefers bullet points in release notes.", "ttl_days": None},
        {"classification": "NOOP", "content": "", "ttl_days": None},
        {"classification": "SHORT", "content": "Ana is on vacation from June 10 to June 20.", "ttl_days": 18},
    ],
    "profile_update": [
        {"communication_style": "Short and direct.", "past_decisions": [], "sensitivities": [],
         "topics": ["release notes in bullet points"]},
        {"communication_style": "", "past_decisions": [], "sensitivities": [], "topics": []},
    ],
    "skill_draft": [
        {"name": "release-notes", "summary": "Write release notes from the changelog.",
         "body": "# Release notes\n\n## Steps\n1. Call `read_changelog`.\n2. Call `draft_notes`."},
        {"decline": True, "reason": "one tool, first run"},
    ],
    "skill_refinement": [{"noop": True}],
    "memory_relevance_filter": [{"selected": [41]}],
    "knowledge_query": ["release process notes"],
    "episode_summary": ["On 2025-05-20 you wrote the 4.2 release notes as bullet points; it ended done."],
    "condense": ["Deploy 4.2 failed at 0042; Ana approved a faked retry, which landed."],
    "compaction_summary": [{"common_task_pattern": "Writing release notes", "common_outcome": "Posted.",
                            "subjects_involved": [], "notable_patterns": ""}],
    "skill_promotion_draft": [{"name": "release-notes", "summary": "Write release notes from the changelog.",
                               "when_to_use": "Before a release.", "steps": ["Call read_changelog.", "Call draft_notes."]}],
    "transcript_shards": [{"shards": [{"lesson": "The tests need the database container first: run make db."}]}],
    "transcript_judge": [{"kept": True, "reason": "general"}, {"kept": False, "reason": "one session"}],
    "artifact_classify": [{"items": [{"id": 1, "tier": "rule", "scope": "migrations"}]}],
    "artifact_draft": [{"name": "database-first", "description": "Start the database first.",
                        "body": "Run make db to start the database before the tests."}],
}
OVERFLOW = "request (1087 tokens) exceeds the available context size (1024 tokens), try increasing it"


def right_answers():
    """A responder that answers each case as RIGHT says, recognised by the exact messages it renders."""
    by_messages = {}
    for name, cases in CASES.items():
        for case, answer in zip(cases, RIGHT[name], strict=True):
            purpose = purposes.get(name)
            key = json.dumps(purpose.render(purpose.read_inputs(case.inputs)))
            by_messages[key] = answer if isinstance(answer, str) else json.dumps(answer)
    return lambda body: by_messages.get(json.dumps(body.get("messages")), "{}")


def probe(serve_config, seat, monkeypatch, responder, mode: str = "", failing: int = 0) -> tuple[str, FakeOpenAIServer]:
    monkeypatch.setenv(OPENAI_KEY_ENV, OPENAI_KEY)
    server = FakeOpenAIServer(mode=mode, responder=responder).start()
    server.api_key = OPENAI_KEY
    if failing:
        server.fail(400, times=failing, message=OVERFLOW)
    llm = {"candidate": openai_spec(server)}
    serve_config(providers=schema.Providers(llm=llm, embeddings=schema.EmbeddingSpec(kind="hashing", dimensions=256)))
    seat.role.llm_auxiliary = ["candidate"]
    seat.role.save()
    out = io.StringIO()
    try:
        call_command("probe_model", seat.role.name, stdout=out)
    except CommandError as exc:
        out.write(f"CommandError: {exc}\n")
    finally:
        server.close()
    return out.getvalue(), server


def rows(text: str) -> dict[str, list[str]]:
    names = set(purposes.all_purposes())
    return {line.split()[0]: line.split()[1:6] for line in text.splitlines() if line.split() and line.split()[0] in names}


@pytest.mark.parametrize("mode", ["", "rejects_response_format", "rejects_max_tokens", "rate_limited_once"])
def test_a_model_that_decides_right_backs_every_purpose(serve_config, seat, monkeypatch, mode):
    text, server = probe(serve_config, seat, monkeypatch, right_answers(), mode)
    print(f"\n--- a right model, mode {mode or 'ok'} ---\n{text}")  # docs/providers.md quotes these

    found = rows(text)
    assert len(found) == PURPOSES
    assert all(found[name] == [str(len(CASES[name])), "0", "0", "0", "0"] for name in found), text
    assert f"role {seat.role.name}: {PURPOSES} of {PURPOSES} purposes can be backed" in text
    assert "CommandError" not in text
    assert Event.objects.filter(name="auxiliary_spend", payload__stage="operator").count() == CASE_COUNT


def test_a_model_that_answers_every_question_alike_cannot_back_a_decision(serve_config, seat, monkeypatch):
    text, _server = probe(serve_config, seat, monkeypatch, ideal_answers())
    print(f"\n--- the same answer to every case ---\n{text}")

    assert "    verdict: this model cannot back persist_decision; use offline or a larger model" in text
    assert "an instruction is not a note: " in text and "CommandError: this chain cannot back" in text


@pytest.mark.parametrize("answer, outcome", [("{}", "unparseable"), ('{"woken_by": "message"}', "unparseable")])
def test_an_empty_or_echoed_object_is_unparseable_everywhere_it_is_asked_for(serve_config, seat, monkeypatch, answer,
                                                                              outcome):
    text, _server = probe(serve_config, seat, monkeypatch, lambda body: answer)
    found = rows(text)
    json_purposes = [name for name, p in purposes.all_purposes().items() if p.json]
    assert all(found[name][3] == str(len(CASES[name])) for name in json_purposes), text
    assert "0 of 14 purposes can be backed" in text or " purposes can be backed" in text


def test_the_prompts_own_template_is_rejected(serve_config, seat, monkeypatch):
    template = ('{"classification": "LONG", "content": "the fact, or empty for NOOP", "ttl_days": null, '
                '"reason": "one short sentence"}')
    text, _server = probe(serve_config, seat, monkeypatch, lambda body: template)
    assert rows(text)["persist_decision"] == ["0", "0", "3", "0", "0"]
    assert "template text 'the fact or empty for noop'" in text


def test_a_context_overflow_says_how_to_fix_it(serve_config, seat, monkeypatch):
    text, _server = probe(serve_config, seat, monkeypatch, right_answers(), failing=CASE_COUNT)
    assert rows(text)["persist_decision"] == ["0", "0", "0", "0", "3"]
    assert ("verdict: the prompt does not fit: set providers.llm.candidate.context_tokens to the server's context size"
            in text)


@pytest.mark.parametrize("mode, ended", [("length", "truncated (length)"), ("reasoning_only", "truncated (stop)")])
def test_a_cut_off_answer_is_a_truncation_with_its_own_verdict(serve_config, seat, monkeypatch, mode, ended):
    text, _server = probe(serve_config, seat, monkeypatch, right_answers(), mode)
    assert f"a stated preference is a LONG note naming it: {ended}" in text
    assert "verdict: answers run past the token budget: this model cannot back persist_decision" in text


def test_probe_of_an_unknown_role_or_purpose_is_a_clear_error(seat):
    with pytest.raises(CommandError, match="no such role"):
        call_command("probe_model", "no-such-role")
    with pytest.raises(CommandError, match="no purpose named 'x'"):
        call_command("probe_model", seat.role.name, "--purpose", "x")
