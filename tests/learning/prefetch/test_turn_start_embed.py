"""The ask's one embed runs beside the database-only blocks and the rankings by words, not before them."""

from __future__ import annotations

import threading

from core.providers.embeddings import get_embedder
from learning.prefetch import skills_block
from tests.embed_waits import embed_waits_for, ranked_while_embedding, watching_words

from .conftest import block


def test_the_asks_embed_runs_while_the_database_only_blocks_start(seat, run, monkeypatch):
    from tests.learning.memory.rows import note

    note(seat, "The billing export runs nightly at 02:00")
    skills_started = threading.Event()
    start = skills_block.start
    # an embed that ran before the blocks (on the request's thread) would wait here in vain
    seen = embed_waits_for(skills_started, monkeypatch)

    def skills_start(ctx):
        skills_started.set()
        return start(ctx)

    monkeypatch.setattr(skills_block, "start", skills_start)

    result = run(ask="the billing export failed again")

    assert seen["meanwhile"] is True  # (a worker ran it; or, not started by the wait, this thread)
    assert result["summary"]["turn_embedding"] == "embedded"
    assert block(result, "personal_memory")["hit"]  # the vector blocks still got the vector


def test_the_tool_guidance_is_built_while_the_ask_is_embedded(seat, run, monkeypatch):
    from learning.prefetch import tool_skills
    from tests.learning.memory.rows import note

    note(seat, "The billing export runs nightly at 02:00")
    guided = threading.Event()
    guidance = tool_skills.guidance
    # guidance built only once the vector is back would leave this embed waiting in vain
    seen = embed_waits_for(guided, monkeypatch)

    def guidance_then_signal(*args, **kwargs):
        out = guidance(*args, **kwargs)
        guided.set()
        return out

    monkeypatch.setattr(tool_skills, "guidance", guidance_then_signal)

    result = run(ask="the billing export failed again")

    assert seen["meanwhile"] is True
    assert result["summary"]["turn_embedding"] == "embedded"
    assert block(result, "personal_memory")["hit"]


def test_an_embed_no_worker_has_started_is_run_on_the_requests_thread(seat, run):
    """Every embed worker busy: the ask's embed, still queued when the vector is needed, is embedded
    by the turn start itself instead of waiting out its budget in the queue."""
    from core.providers.embeddings import base
    from tests.learning.memory.rows import note

    note(seat, "The billing export runs nightly at 02:00")
    release = threading.Event()
    busy = [base._pool.submit(release.wait, 30) for _ in range(base._pool._max_workers)]
    try:
        result = run(ask="the billing export failed again")
    finally:
        release.set()
        for future in busy:
            future.result(timeout=30)

    assert result["summary"]["turn_embedding"] == "embedded"
    assert block(result, "personal_memory")["hit"]


def test_the_notes_and_past_turns_are_ranked_by_words_while_the_ask_is_embedded(seat, run, monkeypatch):
    """Ranking by words needs no vector: both rankings run while the ask embeds, once each."""
    from tests.learning.memory.rows import episode, note

    note(seat, "The billing export runs nightly at 02:00")
    episode(seat, ask="billing export failure", did="restarted the billing export", run_id="old-1")
    result, meanwhile, ranked = ranked_while_embedding(
        {"agent_diary", "episodes"}, monkeypatch, lambda: run(ask="the billing export failed again"))

    assert meanwhile is True
    assert sorted(ranked) == ["agent_diary", "episodes"]  # the searches used them, not ranked again
    assert block(result, "personal_memory")["hit"]
    assert result["summary"]["similar_prior_work_recall"] in ("shown", "close_call")


def test_a_vector_of_another_width_than_announced_is_ranked_by_its_own_words(seat, run, monkeypatch):
    """The words were ranked for the width the embedder announced; a vector of another width is searched
    with a ranking by words of its own scope, and still finds the notes and turns."""
    from django.db import connection

    from learning.prefetch import turn_state
    from tests.learning.memory.rows import episode, note

    note(seat, "The billing export runs nightly at 02:00")
    episode(seat, ask="billing export failure", did="restarted the billing export", run_id="old-1")
    embedder, begin = get_embedder(), turn_state.begin_embed_one

    def announcing_another_width(*args, **kwargs):  # an embed sent as one width, answered as another
        pending = begin(*args, **kwargs)
        pending.shape = (embedder.model, embedder.dim + 1)
        return pending

    monkeypatch.setattr(turn_state, "begin_embed_one", announcing_another_width)
    watch, ranked, _done = watching_words(set())

    with connection.execute_wrapper(watch):
        result = run(ask="the billing export failed again")

    assert sorted(ranked) == ["agent_diary", "agent_diary", "episodes", "episodes"]
    assert block(result, "personal_memory")["hit"]
    assert result["summary"]["similar_prior_work_recall"] in ("shown", "close_call")
