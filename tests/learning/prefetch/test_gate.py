"""The thin-trigger gate: no embedding and no auxiliary call for the three relevance blocks."""

import pytest

from core.models import Event
from core.providers.llm.scripted import ScriptedProvider
from learning.prefetch import Thread, ThreadMessage
from learning.prefetch.hints import (
    EmptyKnowledgeHint,
    EmptyMemoryHint,
    EmptyRecallHint,
    UnsearchedKnowledgeHint,
)
from tests.fakes.confluence_server import closed_port_url
from tests.learning.memory.rows import episode, note, said, skill, stored_turn

from .conftest import aux_spend, block


@pytest.fixture
def rich_memory(seat):
    note(seat, "The billing export runs nightly at 02:00")
    episode(seat, ask="fix the billing export", did="restarted the billing export job", tools=["jira_get"])
    skill(seat, "restart-export", "restart the nightly billing export")


@pytest.mark.parametrize("trigger", [dict(ask="POC-518 got a comment", requires_recon=True), dict(ask="   ")])
def test_thin_trigger_makes_no_embedding_and_no_auxiliary_call(seat, run, rich_memory, embed_calls, serve_native, trigger):
    serve_native(scope=["ENG"])
    result = run(**trigger)
    assert embed_calls == []
    assert aux_spend(turn_id=result["run_id"]) == 0
    assert result["summary"]["turn_embedding"] == "absent"


def test_thin_trigger_renders_every_gate_path_hint(seat, run, rich_memory, serve_native):
    serve_native(scope=["ENG"])
    result = run(ask="+1", requires_recon=True)
    assert EmptyRecallHint in block(result, "similar_prior_work")["text"]
    assert EmptyMemoryHint in block(result, "personal_memory")["text"]
    assert EmptyKnowledgeHint in block(result, "relevant_knowledge")["text"]
    assert not Event.objects.filter(name="knowledge_read").exists()  # the live search is skipped too
    assert result["summary"]["trigger_requires_recon"] is True
    assert result["summary"]["summary"].endswith("(thin trigger: relevance filters gated)")


def test_empty_memory_hint_only_when_the_seat_has_notes(seat, run):
    result = run(ask="+1", requires_recon=True)
    assert block(result, "personal_memory")["text"] == ""
    note(seat, "Ana prefers digests")
    result = run(ask="+1", requires_recon=True)
    assert EmptyMemoryHint in block(result, "personal_memory")["text"]


def test_recall_hint_is_phrased_conditionally_and_shown_without_episodes(seat, run):
    result = run(ask="+1", requires_recon=True)
    text = block(result, "similar_prior_work")["text"]
    assert text.endswith(EmptyRecallHint) and EmptyRecallHint.startswith("If this task resembles")


def test_knowledge_hint_needs_a_searcher_that_could_search(seat, run, serve_native):
    serve_native(scope=[])  # nothing in the read scope: no search could return anything
    assert block(run(ask="+1", requires_recon=True), "relevant_knowledge")["text"] == ""


def test_empty_ask_is_gated_but_does_not_set_requires_recon(seat, run):
    note(seat, "Ana prefers digests")
    result = run(ask="")
    assert result["summary"]["trigger_requires_recon"] is False
    assert result["summary"]["thin_trigger"] is True
    assert EmptyMemoryHint in block(result, "personal_memory")["text"]


def test_thread_ledger_and_profiles_are_not_gated(seat, run):
    from learning.models import CounterpartyProfile

    CounterpartyProfile.objects.create(observer=seat, subject_handle="carol", subject_platform="mattermost",
                                       communication_style="terse, wants links")
    stored_turn(seat, run_id="earlier", conversation_id="thread-9", ask="is the export fixed?",
                plan_summary="Said it was restarted at 02:10.")
    result = run(
        ask="+1", requires_recon=True, conversation_id="thread-9",
        interactions=(said("+1", handle="carol", platform="mattermost", name="Carol"),),
        thread=Thread(messages=(ThreadMessage(sender_name="Carol", text="is the export fixed?"),
                                ThreadMessage(sender_name="Ana", is_self=True, text="restarted it"),
                                ThreadMessage(sender_name="Carol", text="+1"))),
    )
    assert "terse, wants links" in block(result, "counterparty_profiles")["text"]
    assert "Said it was restarted at 02:10." in block(result, "conversation_ledger")["text"]
    thread = block(result, "thread_so_far")["text"]
    assert "Ana (you): restarted it" in thread and thread.index("is the export fixed?") < thread.index("+1")


def test_a_profile_from_another_platform_with_the_same_handle_is_never_shown(seat, run):
    from learning.models import CounterpartyProfile

    CounterpartyProfile.objects.create(observer=seat, subject_handle="carol", subject_platform="slack",
                                       communication_style="the slack carol: formal")
    result = run(ask="+1", requires_recon=True,
                 interactions=(said("+1", handle="carol", platform="mattermost", name="Carol"),))
    assert block(result, "counterparty_profiles")["text"] == ""
    CounterpartyProfile.objects.create(observer=seat, subject_handle="carol", subject_platform="mattermost",
                                       communication_style="the mattermost carol: terse")
    text = block(run(ask="+1", requires_recon=True, interactions=(
        said("+1", handle="carol", platform="mattermost", name="Carol"),)), "counterparty_profiles")["text"]
    assert "the mattermost carol: terse" in text and "formal" not in text


def test_rich_trigger_embeds_once_for_memory_and_episodes(seat, run, rich_memory, embed_calls):
    result = run(ask="the billing export failed again last night")
    assert len(embed_calls) == 1
    assert result["summary"]["turn_embedding"] == "embedded"
    assert "restarted the billing export job" in block(result, "similar_prior_work")["text"]
    assert "The billing export runs nightly at 02:00" in block(result, "personal_memory")["text"]


def test_unsearched_knowledge_is_a_different_sentence_from_nothing_found(seat, run, serve_confluence, serve_native):
    serve_confluence(closed_port_url(), scope=["ENG"])  # configured, but nothing answers
    unsearched = block(run(ask="how do we rotate the signing key"), "relevant_knowledge")["text"]
    serve_native(scope=["ENG"])  # searched, and no page matches
    empty = block(run(ask="how do we rotate the signing key"), "relevant_knowledge")["text"]
    assert UnsearchedKnowledgeHint in unsearched and EmptyKnowledgeHint not in unsearched
    assert EmptyKnowledgeHint in empty and UnsearchedKnowledgeHint not in empty
    assert UnsearchedKnowledgeHint != EmptyKnowledgeHint


def test_failed_embedding_is_reported_and_recency_still_feeds_the_filter(seat, run, role, monkeypatch):
    from core.providers.errors import TransientError

    note(seat, "Use semantic commit messages on every PR")

    class Down:
        model, dim, max_input_chars = "hashing-256", 256, 1000

        def embed_batch(self, texts):
            raise TransientError("503")

    monkeypatch.setattr("core.providers.embeddings.base.get_embedder", lambda: Down())
    result = run(ask="open a PR for the billing fix")
    assert result["summary"]["turn_embedding"] == "failed"
    assert result["summary"]["similar_prior_work_recall"] == "not_searched"  # not "no past turn matched"
    assert "semantic commit messages" in block(result, "personal_memory")["text"]
    assert Event.objects.filter(name="prefetch_summary", turn_id=result["run_id"]).count() == 1


def test_scripted_filter_is_told_who_triggered_the_turn(seat, run, role):
    role.llm_auxiliary = ["scripted"]
    role.save()
    note(seat, "Carol wants links to the runbook in every answer")
    run(ask="can you check the export?", interactions=(said("can you check", handle="carol", name="Carol",
                                                                    platform="mattermost"),))
    calls = [c for c in ScriptedProvider.calls if c["purpose"] == "memory_relevance_filter"]
    assert calls and calls[0]["inputs"].triggered_by == ["Carol (mattermost)"]
    assert "Carol (mattermost)" in calls[0]["messages"][1]["content"]


def test_the_ledger_reads_what_was_asked_from_the_stored_interactions(seat, run):
    stored_turn(seat, run_id="earlier", conversation_id="jira:PLAT-88", conversation_kind="tracker",
                interactions=[said("Reproduce on staging first.", handle="ravi", name="Ravi"),
                              said("And attach the logs.", handle="tom", name="Tom")],
                plan_summary="Reproduced it on staging.", tool_sequence=["jira_get_issue"])
    text = block(run(ask="any news?", conversation_id="jira:PLAT-88"), "conversation_ledger")["text"]
    assert "asked: Ravi: Reproduce on staging first. Tom: And attach the logs." in text
    assert "tools: jira_get_issue" in text
    assert block(run(ask="any news?", conversation_id="jira:OTHER"), "conversation_ledger")["text"] == ""
