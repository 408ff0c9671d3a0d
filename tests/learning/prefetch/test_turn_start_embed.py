"""The ask's one embed runs beside the database-only blocks, not before them."""

from __future__ import annotations

import threading

from core.providers.embeddings import get_embedder
from learning.prefetch import skills_block

from .conftest import block


def test_the_asks_embed_runs_while_the_database_only_blocks_start(seat, run, monkeypatch):
    from tests.learning.memory_rows import note

    note(seat, "The billing export runs nightly at 02:00")
    skills_started = threading.Event()
    seen = {}
    embedder = get_embedder()
    embed_batch, start = embedder.embed_batch, skills_block.start

    def embed_waiting_for_the_blocks(texts):
        # an embed that ran before the blocks (on the request's thread) would wait here in vain
        seen["blocks_started_meanwhile"] = skills_started.wait(timeout=30)
        return embed_batch(texts)

    def skills_start(ctx):
        skills_started.set()
        return start(ctx)

    monkeypatch.setattr(embedder, "embed_batch", embed_waiting_for_the_blocks)
    monkeypatch.setattr(skills_block, "start", skills_start)

    result = run(ask="the billing export failed again")

    assert seen["blocks_started_meanwhile"] is True  # (a worker ran it; or, not started by the wait, this thread)
    assert result["summary"]["turn_embedding"] == "embedded"
    assert block(result, "personal_memory")["hit"]  # the vector blocks still got the vector


def test_the_tool_guidance_is_built_while_the_ask_is_embedded(seat, run, monkeypatch):
    from learning.prefetch import tool_skills
    from tests.learning.memory_rows import note

    note(seat, "The billing export runs nightly at 02:00")
    guided = threading.Event()
    seen = {}
    embedder = get_embedder()
    embed_batch, guidance = embedder.embed_batch, tool_skills.guidance

    def embed_waiting_for_the_guidance(texts):
        # guidance built only once the vector is back would leave this embed waiting in vain
        seen["guidance_built_meanwhile"] = guided.wait(timeout=30)
        return embed_batch(texts)

    def guidance_then_signal(*args, **kwargs):
        out = guidance(*args, **kwargs)
        guided.set()
        return out

    monkeypatch.setattr(embedder, "embed_batch", embed_waiting_for_the_guidance)
    monkeypatch.setattr(tool_skills, "guidance", guidance_then_signal)

    result = run(ask="the billing export failed again")

    assert seen["guidance_built_meanwhile"] is True
    assert result["summary"]["turn_embedding"] == "embedded"
    assert block(result, "personal_memory")["hit"]


def test_an_embed_no_worker_has_started_is_run_on_the_requests_thread(seat, run):
    """Every embed worker busy: the ask's embed, still queued when the vector is needed, is embedded
    by the turn start itself instead of waiting out its budget in the queue."""
    from core.providers.embeddings import base
    from tests.learning.memory_rows import note

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
