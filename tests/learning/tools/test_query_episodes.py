"""query_episodes: similarity / conversation / recency, the condensation, and every failure cause."""

import pytest
from django.db import DatabaseError

from core.providers.errors import ConfigurationError, RateLimitedError, RefusedError, TransientError
from core.providers.llm.scripted import ScriptedProvider
from crewlet.config import schema
from crewlet.errors import BadInput
from learning.memory import episodes
from learning.models import Episode
from learning.tools import query_episodes
from tests.learning.memory.rows import episode


def test_similarity_answers_woken_by_asked_outcome_what_it_did_and_turn_ids(seat, call):
    episode(seat, label="Message from Carol: Slack message", ask="the billing export failed", tools=["jira_get"],
            did="Restarted the export job and confirmed the file landed.", run_id="t-1")
    episode(seat, label="lunch", ask="order lunch", did="ordered pizza", run_id="t-2")
    result = call("query_episodes", query="billing export failure")
    assert result.ok and result.text.startswith("Your turns most similar to the query, most similar first:")
    first = result.data["hits"][0]
    assert first["turn_id"] == "t-1"
    assert "woken by: Message from Carol: Slack message · done · tools: jira_get" in first["text"]
    assert "asked: the billing export failed" in first["text"]
    assert "what it did: Restarted the export job and confirmed the file landed." in first["text"]


def test_a_turn_that_was_told_nothing_shows_no_ask(seat, call):
    episode(seat, label="swe was assigned scheduled work weekly-report", ask="", did="wrote the weekly report")
    text = call("query_episodes", query="weekly report").data["hits"][0]["text"]
    assert "asked:" not in text and "what it did: wrote the weekly report" in text


def test_similarity_says_how_many_turns_it_could_not_reach(seat, call):
    episode(seat, ask="billing export", did="fixed it")
    episode(seat, ask="billing export again", did="fixed it again", embed=False)
    result = call("query_episodes", query="billing export")
    assert result.data["unreachable"] == 1
    assert "1 of your turns could not be reached by this search yet" in result.text
    assert "conversation" in result.text and "recency" in result.text


def test_empty_answer_is_new_work_only_when_nothing_was_unreachable(seat, call):
    assert call("query_episodes", query="quantum lattice").text == "None of your past turns resembles this: this is new work."
    episode(seat, ask="unfilled", did="x", embed=False)
    text = call("query_episodes", query="quantum lattice").text
    assert "new work" not in text and "1 of your turns could not be reached" in text


def test_conversation_and_recency_return_both_kinds_compacted_as_a_pattern(seat, call):
    episode(seat, ask="one", did="did one", conversation_id="c-1", run_id="r-1")
    episode(seat, kind=Episode.COMPACTED, conversation_id="c-1", count=12, success_rate=0.75, days_ago=40,
            common_task_pattern="triage billing alerts", notable_patterns="which job failed varied", embed=False)
    episode(seat, ask="elsewhere", did="did elsewhere", conversation_id="c-2")
    result = call("query_episodes", conversation="c-1")
    assert result.data["mode"] == "conversation" and len(result.data["hits"]) == 2
    compacted = next(h for h in result.data["hits"] if h["kind"] == "compacted")["text"]
    assert "a pattern of 12 turns, 9 ended done" in compacted and "pattern: triage billing alerts" in compacted
    assert "what varied: which job failed varied" in compacted and " to " in compacted
    recent = call("query_episodes")
    assert recent.data["mode"] == "recency" and len(recent.data["hits"]) == 3


def test_outcome_filter_and_limit(seat, call):
    for i in range(4):
        episode(seat, ask=f"job {i}", did="x", outcome="failed" if i % 2 else "done")
    result = call("query_episodes", outcome_filter="failed", limit=1)
    assert len(result.data["hits"]) == 1 and "· failed ·" in result.data["hits"][0]["text"]
    with pytest.raises(BadInput) as err:
        call("query_episodes", outcome_filter="maybe")
    assert err.value.extra["errors"][0]["field"] == "arguments.outcome_filter"


def test_an_account_past_600_bytes_is_condensed_and_marked_or_named_by_size(seat, role, call):
    episode(seat, ask="billing export", did="Restarted the billing export job. " * 30)
    assert "(condensed)" in call("query_episodes", query="billing export").text
    role.llm_auxiliary = ["scripted"]
    role.save()
    ScriptedProvider.queue("condense", TransientError("503"))
    text = call("query_episodes", query="billing export").text
    assert "[1020 bytes; no rewrite could be had in time]" in text


class _Failing:
    model, dim, max_input_chars = "hashing-256", 256, 1000

    def __init__(self, error):
        self.error = error

    def embed_batch(self, texts):
        raise self.error


CAUSE_CASES = [
    ("configuration", ConfigurationError("401 invalid api key")),
    ("refused", RefusedError("content policy")),
    ("transient", TransientError("503")),
    ("transient", RateLimitedError("429")),
]


@pytest.mark.parametrize("cause,error", CAUSE_CASES)
def test_each_embedder_failure_says_what_stopped_it_and_what_still_works(seat, call, monkeypatch, cause, error):
    monkeypatch.setattr("learning.tools.query_episodes.get_embedder", lambda: _Failing(error))
    monkeypatch.setattr("core.providers.embeddings.base.get_embedder", lambda: _Failing(error))
    result = call("query_episodes", query="billing export")
    assert not result.ok and result.data["cause"] == cause
    assert result.text.startswith(query_episodes.CAUSES[cause].split("(")[0].split(";")[0])
    assert result.text.endswith(query_episodes.STILL_WORKS)


def test_no_embeddings_configured(seat, call, serve_config):
    serve_config(providers=schema.Providers(llm={"offline": schema.ProviderSpec(kind="offline")},
                                            embeddings=schema.EmbeddingSpec(kind="none")))
    result = call("query_episodes", query="billing export")
    assert result.data["cause"] == "unconfigured" and "no embeddings configured" in result.text
    assert result.text.endswith(query_episodes.STILL_WORKS)


def test_unknown_embedder_kind_is_the_configurations_fault(seat, call, serve_config):
    with pytest.raises(ValueError, match="nonsense"):
        schema.EmbeddingSpec(kind="nonsense")  # the typed config refuses it; the seam still guards
    spec = schema.EmbeddingSpec()
    object.__setattr__(spec, "kind", "nonsense")
    serve_config(providers=schema.Providers(llm={"offline": schema.ProviderSpec(kind="offline")}, embeddings=spec))
    assert call("query_episodes", query="x").data["cause"] == "configuration"


def test_an_unreadable_store_is_said_as_what_it_was(seat, call, monkeypatch):
    def broken(**kwargs):
        raise DatabaseError("no such table: episodes")

    monkeypatch.setattr(episodes, "recall", broken)
    result = call("query_episodes", query="billing")
    assert result.data["cause"] == "store" and "no such table: episodes" in result.text
    assert result.text.endswith(query_episodes.STILL_WORKS)


def test_every_cause_has_its_own_message():
    assert len(set(query_episodes.CAUSES.values())) == len(query_episodes.CAUSES) == 5


def test_the_turns_are_ranked_by_the_querys_words_while_it_embeds(seat, call, monkeypatch):
    """A ranking by words needs no vector: it runs while the query embeds, and the search uses it."""
    from tests.embed_waits import ranked_while_embedding

    episode(seat, ask="billing export failure", did="restarted the billing export", run_id="old-1")
    result, meanwhile, ranked = ranked_while_embedding(
        {"episodes"}, monkeypatch, lambda: call("query_episodes", query="billing export failed"))

    assert meanwhile is True
    assert ranked == ["episodes"]  # the search used that ranking
    assert result.ok and [h["turn_id"] for h in result.data["hits"]] == ["old-1"]
