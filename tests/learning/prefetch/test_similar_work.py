"""## Similar prior work: top 3 raw turns, bullets or an auxiliary briefing, one deadline."""

from core.providers.errors import TransientError
from core.providers.llm.scripted import ScriptedProvider
from crewlet.config import schema
from learning.models import Episode
from learning.prefetch.similar_work import HEADING
from tests.learning.memory.rows import episode

from .conftest import aux_spend, block

ASK = "the billing export failed again"


def _three(seat):
    for i in range(5):
        episode(seat, ask=f"billing export failure {i}", did=f"restarted the billing export {i}",
                tools=["jira_get", "shell"], run_id=f"old-{i}")
    episode(seat, kind=Episode.COMPACTED, label="billing export failures", embed=False, count=9, success_rate=1.0)


def test_top_three_raw_turns_as_woken_by_asked_what_it_did(seat, run):
    _three(seat)
    result = run(ask=ASK)
    text = block(result, "similar_prior_work")["text"]
    assert result["summary"]["similar_prior_work_recall"] in ("shown", "close_call")
    assert text.count("  Woken by:") + text.count("· Woken by:") == 3
    assert text.count("Asked: billing export failure") == 3 and "What it did: restarted" in text
    assert "done · tools: jira_get, shell" in text
    assert "a pattern of" not in text  # similarity reads raw rows only


def test_long_accounts_are_condensed_and_marked(seat, run):
    episode(seat, ask="billing export failure", did="restarted the billing export. " * 40, run_id="long-1")
    text = block(run(ask=ASK), "similar_prior_work")["text"]
    assert "(condensed)" in text


def test_summary_on_replaces_the_bullets_with_one_briefing(seat, run, serve_config):
    serve_config(learning=schema.Learning(summarize_episodes=True))
    _three(seat)
    result = run(ask=ASK)
    text = block(result, "similar_prior_work")["text"]
    assert text.startswith(HEADING) and "Woken by:" not in text and "you were asked" in text
    assert aux_spend(result["run_id"], "episode_summary") == 1


def test_a_summary_that_does_not_answer_is_answered_offline(seat, role, run, serve_config):
    serve_config(learning=schema.Learning(summarize_episodes=True))
    role.llm_auxiliary = ["scripted"]
    role.save()
    _three(seat)
    ScriptedProvider.queue("episode_summary", TransientError("503"))
    text = block(run(ask=ASK), "similar_prior_work")["text"]
    assert "you were asked: billing export failure" in text


def test_summary_off_makes_no_summary_call(seat, run):
    _three(seat)
    assert aux_spend(run(ask=ASK)["run_id"], "episode_summary") == 0


def test_no_similar_turns_no_block(seat, run):
    episode(seat, ask="lunch order", did="ordered lunch", label="lunch")
    result = run(ask="quantum chromodynamics lattice")
    assert block(result, "similar_prior_work")["text"] == ""
    assert result["summary"]["similar_prior_work_recall"] == "none"  # the summary says why it is empty


def test_a_thin_trigger_is_recorded_as_gated_not_as_nothing_found(seat, run):
    _three(seat)
    result = run(ask=ASK, requires_recon=True)
    assert result["summary"]["similar_prior_work_recall"] == "gated"


def test_the_summary_reads_texts_whole_up_to_about_11_kb_and_condenses_past_it(seat, role, run, serve_config):
    serve_config(learning=schema.Learning(summarize_episodes=True))
    role.llm_auxiliary = ["scripted"]
    role.save()
    episode(seat, ask="the billing export failed again. " * 400, did="restarted the billing export")
    episode(seat, ask="billing export failure again", did="restarted the billing export " * 100)
    result = run(ask=ASK)
    call = next(c for c in ScriptedProvider.calls if c["purpose"] == "episode_summary")
    asks = sorted(len(t["asked"]) for t in call["inputs"].turns)
    assert asks[-1] < 11_000 and "(condensed)" in "".join(t["asked"] for t in call["inputs"].turns)
    assert any(len(t["what_it_did"]) > 600 for t in call["inputs"].turns)  # read whole, not cut at 600
    assert aux_spend(result["run_id"], "condense") == 1


def test_a_summary_still_running_at_the_deadline_is_answered_offline(seat, role, run, serve_config, monkeypatch):
    import time

    serve_config(learning=schema.Learning(summarize_episodes=True, turn_start_model_seconds=0.3))
    role.llm_auxiliary = ["scripted"]
    role.save()
    _three(seat)
    original = ScriptedProvider.complete

    def slow(self, messages, **kwargs):
        if getattr(kwargs.get("purpose"), "name", "") == "episode_summary":
            time.sleep(1.0)
        return original(self, messages, **kwargs)

    monkeypatch.setattr(ScriptedProvider, "complete", slow)
    result = run(ask=ASK)
    assert "you were asked:" in block(result, "similar_prior_work")["text"]
    assert result["summary"]["model_fallbacks"] == {"episode_summary": "deadline"}
    assert "(offline: episode_summary deadline)" in result["summary"]["summary"]


def test_a_recall_that_fails_leaves_the_block_empty_and_the_turn_whole(seat, run):
    from django.db import DatabaseError, connection

    _three(seat)

    def episode_search_fails(execute, sql, params, many, context):
        if "FROM episodes t" in sql:  # the episode search: its words and its meaning rankings
            raise DatabaseError("canceling statement due to statement timeout")
        return execute(sql, params, many, context)

    with connection.execute_wrapper(episode_search_fails):
        result = run(ask=ASK)
    assert block(result, "similar_prior_work")["text"] == ""
    assert result["frozen"] is False and result["summary"]["blocks"]["similar_prior_work"]["hit"] is False
    assert result["summary"]["turn_embedding"] == "embedded"
    assert result["summary"]["similar_prior_work_recall"] == "failed"
