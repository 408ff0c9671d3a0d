"""A weak or wrong model makes the service learn less, never learn garbage.

Real reflections (and a real turn start) against the fake OpenAI-compatible server, answering with
what small models were seen to answer: the prompt's own template text, an echo of the input, ``{}``,
a context-overflow 400, the same note twice. Each such answer is charged, recorded with its reason,
and the offline answer (or the next alias's) is what is stored.
"""

from __future__ import annotations

import json
import logging

import pytest

from core.models import Event
from crewlet.config import schema
from learning.models import CounterpartyProfile, DiaryEntry
from learning.prefetch import PrefetchRequest, prefetch
from learning.purposes import persist_decision
from learning.reflection import reflect_turn
from tests.core.providers.helpers import OPENAI_KEY, OPENAI_KEY_ENV, openai_spec
from tests.fakes.openai_server import FakeOpenAIServer
from tests.learning.memory.rows import note

OPENINGS = {  # how each purpose's system prompt opens, as the server reads it
    "You review one turn an agent has just finished and decide what": "persist_decision",
    "You keep an agent's private notes about one person": "profile_update",
    "You choose which of an agent's own notes": "memory_relevance_filter",
}
OFFLINE_NOTE = "Maya prefers short bullet-point status updates."
OVERFLOW = "request (1087 tokens) exceeds the available context size (1024 tokens), try increasing it"


def purpose_of(body: dict) -> str:
    system = next((m["content"] for m in body.get("messages", []) if m.get("role") == "system"), "")
    return next((name for opening, name in OPENINGS.items() if system.startswith(opening)), "other")


@pytest.fixture
def model(monkeypatch, serve_config, role):
    """Two aliases on fake servers, ``tiny`` then ``smol``; ``model.say(purpose, answer)`` sets what one answers."""
    monkeypatch.setenv(OPENAI_KEY_ENV, OPENAI_KEY)
    answers: dict[str, dict[str, str]] = {"tiny": {}, "smol": {}}

    class Model:
        def say(self, purpose: str, answer, alias: str = "tiny") -> None:
            answers[alias][purpose] = answer if isinstance(answer, str) else json.dumps(answer)

    servers = {alias: FakeOpenAIServer(responder=lambda body, a=alias: answers[a].get(purpose_of(body), "{}")).start()
               for alias in answers}
    llm = {alias: openai_spec(server, max_retries=0) for alias, server in servers.items()}
    serve_config(providers=schema.Providers(llm=llm, embeddings=schema.EmbeddingSpec(kind="hashing", dimensions=256)))
    role.llm_auxiliary = ["tiny"]
    role.save()
    found = Model()
    found.servers = servers
    yield found
    for server in servers.values():
        server.close()


def spend(purpose: str) -> list[dict]:
    return [e.payload for e in Event.objects.filter(name="auxiliary_spend", payload__purpose=purpose).order_by("id")]


def outcome(worker: str) -> dict:
    return Event.objects.filter(name="reflection_completed").order_by("id").last().payload["workers"][worker]


def decision(content: str, classification: str = "LONG") -> dict:
    return {"classification": classification, "content": content, "ttl_days": None, "reason": "stated"}


def test_the_prompts_template_text_is_never_stored_as_a_note(seat, make_turn, model):
    model.say("persist_decision", decision("The fact, or empty for NOOP"))

    reflect_turn(make_turn().pk)

    assert list(DiaryEntry.objects.values_list("content", flat=True)) == [OFFLINE_NOTE]
    (rejected,) = spend("persist_decision")
    assert rejected["outcome"] == "rejected" and rejected["input_tokens"] > 0  # charged
    assert "template text 'the fact or empty for noop'" in rejected["reason"]
    result = outcome("persist_decider")["result"]
    assert result["answered_by"] == "offline" and "template text" in result["fallback"]


@pytest.mark.parametrize("answer", ["{}", '{"seat": "ana", "woken_by": "Message from Maya: Slack message"}'])
def test_an_empty_or_echoed_object_is_no_decision(seat, make_turn, model, answer):
    model.say("persist_decision", answer)

    reflect_turn(make_turn().pk)

    assert list(DiaryEntry.objects.values_list("content", flat=True)) == [OFFLINE_NOTE]
    (unparseable,) = spend("persist_decision")
    assert unparseable["outcome"] == "unparseable" and "none of the fields asked for" in unparseable["reason"]


def test_a_note_the_turn_does_not_support_or_that_repeats_a_message_is_rejected(seat, make_turn, model):
    model.say("persist_decision", decision("Minecraft.com is the team's favourite site."))
    reflect_turn(make_turn().pk)
    model.say("persist_decision", decision("Thanks! I prefer short bullet-point status updates."))
    reflect_turn(make_turn(interactions=[{"sender": {"handle": "maya", "external_id": "", "platform": "mattermost",
                                                     "display_name": "Maya", "kind": "human"},
                                          "body": "Thanks! I prefer short bullet-point status updates.", "at": None}]).pk)

    reasons = [row["reason"] for row in spend("persist_decision")]
    assert "the LONG note states nothing the turn's text supports" in reasons[0]
    assert "content repeats the input's" in reasons[1]
    assert list(DiaryEntry.objects.values_list("content", flat=True)) == [OFFLINE_NOTE]  # the second is a duplicate


def test_a_profile_echoing_the_label_or_naming_what_nobody_said_keeps_the_offline_observation(seat, make_turn, model):
    model.say("profile_update", {"communication_style": "Message from Maya: Slack message", "past_decisions": [],
                                 "sensitivities": [], "topics": []})
    reflect_turn(make_turn().pk)
    model.say("profile_update", {"communication_style": "", "past_decisions": [], "sensitivities": [],
                                 "topics": ["###STOP###"]})
    reflect_turn(make_turn(interactions=[{"sender": {"handle": "maya", "external_id": "", "platform": "mattermost",
                                                     "display_name": "Maya", "kind": "human"},
                                          "body": "Let's go with the Tuesday release.", "at": None}]).pk)

    first, second = (row["reason"] for row in spend("profile_update"))
    assert first.startswith("communication_style repeats the input's woken_by")
    assert second == "topics item '###STOP###' shares no word with what Maya said"
    profile = CounterpartyProfile.objects.get()
    assert profile.communication_style.startswith("Writes") and "###STOP###" not in profile.topics
    assert outcome("profiler")["result"]["answered_by"] == "offline"


def test_a_context_overflow_names_the_setting_and_falls_through_to_the_next_alias(seat, role, make_turn, model, caplog):
    role.llm_auxiliary = ["tiny", "smol"]
    role.save()
    model.servers["tiny"].fail(400, message=OVERFLOW)
    model.say("persist_decision", decision("Maya prefers short status updates."), alias="smol")

    with caplog.at_level(logging.WARNING, logger="core.auxiliary"):
        reflect_turn(make_turn().pk)

    assert list(DiaryEntry.objects.values_list("content", flat=True)) == ["Maya prefers short status updates."]
    overflow, answered = spend("persist_decision")
    assert (overflow["provider"], overflow["outcome"]) == ("tiny", "context_overflow")
    assert "set providers.llm.tiny.context_tokens to the server's context size" in overflow["reason"]
    assert (answered["provider"], answered["outcome"]) == ("smol", "answered")
    assert outcome("persist_decider")["result"]["answered_by"] == "smol"
    fell = [r.getMessage() for r in caplog.records if r.getMessage().startswith("persist_decision: tiny")]
    assert len(fell) == 1 and fell[0].endswith("trying smol") and not caplog.records[0].exc_info


def test_the_last_alias_logs_no_next_one_and_no_traceback(seat, make_turn, model, caplog):
    model.servers["tiny"].fail(503)
    with caplog.at_level(logging.WARNING, logger="core.auxiliary"):
        reflect_turn(make_turn().pk)
    lines = [r for r in caplog.records if r.getMessage().startswith("persist_decision:")]
    assert len(lines) == 1 and lines[0].getMessage().endswith("answering offline") and lines[0].exc_info is None
    assert "trying" not in lines[0].getMessage()


def test_the_same_note_twice_is_stored_once(seat, make_turn, model):
    model.say("persist_decision", decision("Maya prefers short status updates."))
    reflect_turn(make_turn().pk)
    model.say("persist_decision", decision("maya prefers SHORT status updates"))
    reflect_turn(make_turn().pk)

    assert DiaryEntry.objects.count() == 1
    result = outcome("persist_decider")["result"]
    assert result["skipped"] == "duplicate" and result["duplicate_of"] == DiaryEntry.objects.get().pk


def test_sampling_is_pinned_on_every_request(seat, make_turn, model, serve_config):
    reflect_turn(make_turn().pk)
    body = model.servers["tiny"].last().body
    assert (body["temperature"], body["seed"]) == (0.0, 0)
    assert "\n\n\n\n\n" in body["stop"]  # a whitespace runaway ends the answer early


def test_a_seat_over_its_budget_asks_no_model_at_turn_start_and_the_summary_says_so(seat, model):
    from core import budgets

    note(seat, "The billing export runs nightly at 02:00")
    seat.token_budget = 10
    seat.save()
    budgets.charge(seat, 10)

    result = prefetch(seat=seat, request=PrefetchRequest(run_id="r-1", ask="When does the billing export run?"))

    assert model.servers["tiny"].requests == []
    assert result["summary"]["model_fallbacks"] == {"memory_relevance_filter": "budget"}
    assert "(offline: memory_relevance_filter budget)" in result["summary"]["summary"]
    assert "The billing export runs nightly" in next(b["text"] for b in result["blocks"] if b["name"] == "personal_memory")


def test_a_seat_over_its_budget_asks_no_model_in_reflection_either(seat, make_turn, model):
    from core import auxiliary, budgets

    seat.token_budget = 10
    seat.save()
    budgets.charge(seat, 10)
    turn = make_turn()

    answer = auxiliary.call(seat=seat, stage="reflection", purpose=persist_decision.NAME, turn_id=turn.run_id,
                      inputs={"interactions": [], "asked": "Keep updates short."})

    assert (answer.provider, answer.fallback_kind) == ("offline", "budget")
    assert model.servers["tiny"].requests == []
