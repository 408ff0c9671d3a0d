"""Every completion made on a seat's behalf is charged: the completions a slow OpenAI-compatible
server received, counted against the ``auxiliary_spend`` rows, path by path — late calls included.

The database is transactional: a late call is recorded on its own worker thread's connection.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import replace

import pytest

from core import late_spend
from core.models import Event
from crewlet.config import schema
from learning.memory import condensation
from learning.passes import lifecycle
from tests.core.providers.helpers import OPENAI_KEY, OPENAI_KEY_ENV, openai_spec
from tests.fakes.openai_server import FakeOpenAIServer
from tests.learning.memory.rows import episode as recalled_turn
from tests.learning.passes.conftest import episode as aged_turn
from tests.learning.prefetch.conftest import block, run  # noqa: F401 (the prefetch's ``run`` fixture)
from tests.learning.purposes.corpus import IDEAL

pytestmark = pytest.mark.django_db(transaction=True)

SYSTEM_PROMPTS = {  # how each purpose's request opens, as the server reads it
    "You condense": "condense",
    "You compact": "compaction_summary",
    "You brief an agent": "episode_summary",
    "You choose which": "memory_relevance_filter",
    "You turn what an agent": "knowledge_query",
}


def purpose_of(body: dict) -> str:
    system = next((m["content"] for m in body.get("messages", []) if m.get("role") == "system"), "")
    return next((name for opening, name in SYSTEM_PROMPTS.items() if system.startswith(opening)), "other")


# the compacted turns below fix a build: a summary of other work is rejected for meaning
COMPACTION = ('{"common_task_pattern": "Fixing failing builds", "common_outcome": "Most ended done.", '
              '"subjects_involved": [], "notable_patterns": "The disk was full."}')


# the condensed texts below are about a billing export: a condensation of other work is rejected for meaning
CONDENSED = "The billing export failed and was restarted."


def answer(body: dict) -> str:
    purpose = purpose_of(body)
    return {"compaction_summary": COMPACTION, "condense": CONDENSED}.get(purpose) or IDEAL.get(purpose, "ok")


@pytest.fixture
def slow_server(monkeypatch, serve_config, role):
    """A fake OpenAI server the seat's auxiliary chain names; ``slow_server(delay, **config)``."""
    import openai  # noqa: F401 (imported here, not on a worker thread inside a test's deadline)

    monkeypatch.setenv(OPENAI_KEY_ENV, OPENAI_KEY)
    server = FakeOpenAIServer(responder=answer).start()
    role.llm_auxiliary = ["fake"]
    role.save()

    def serve(delay: float, **overrides):
        server.delay = delay
        providers = schema.Providers(
            llm={"fake": openai_spec(server, max_retries=0, timeout_seconds=10.0)},
            embeddings=schema.EmbeddingSpec(kind="hashing", model="hashing-256", dimensions=256),
        )
        serve_config(providers=providers, **overrides)
        return server

    yield serve
    assert late_spend.wait(30) == 0
    server.close()


def made(server) -> Counter:
    return Counter(purpose_of(r.body) for r in server.requests if r.path == "/v1/chat/completions")


def recorded() -> Counter:
    return Counter(e.payload["purpose"] for e in Event.objects.filter(name="auxiliary_spend"))


def settled(server) -> tuple[Counter, Counter]:
    assert late_spend.wait(30) == 0  # every late call has returned and been recorded
    return made(server), recorded()


def test_rewrites_past_the_deadline_are_charged_when_they_return(seat, slow_server):
    server = slow_server(0.1)
    server.hold(after=4)  # the second wave is still running at the deadline
    out = condensation.rewrite_all(seat=seat, texts=["billing " * 100] * 10, max_bytes=100, stage="turn", timeout=3.0)
    assert [r.mode for r in out] == ["rewrite"] * 4 + ["size"] * 6
    server.release()
    sent, charged = settled(server)
    assert sent["condense"] == 8 and charged == sent  # the last two never started: cancelled, never sent


def test_prefetch_bullet_rewrites_past_the_deadline_are_charged(seat, slow_server, run):  # noqa: F811
    server = slow_server(0.1, learning=schema.Learning(turn_start_model_seconds=3.0))
    server.hold(after=4)  # of the six rewrites, two are still running at the deadline
    for i in range(3):
        recalled_turn(seat, ask=f"the billing export failed again, case {i}. " * 20,
                      did=f"restarted the billing export {i}. " * 30, tools=["shell"], run_id=f"old-{i}")
    text = block(run(ask="the billing export failed again"), "similar_prior_work")["text"]
    assert text.count("no rewrite could be had in time") == 2 and text.count("(condensed)") == 4
    server.release()
    sent, charged = settled(server)
    assert sent["condense"] == 6 and charged == sent


def test_a_prefetch_briefing_past_the_deadline_is_charged(seat, slow_server, run):  # noqa: F811
    server = slow_server(0.0, learning=schema.Learning(summarize_episodes=True, turn_start_model_seconds=0.3))
    server.hold(after=0)  # the briefing is still running at the deadline
    for i in range(3):
        recalled_turn(seat, ask=f"billing export failure {i}", did=f"restarted the billing export {i}",
                      tools=["shell"], run_id=f"old-{i}")
    text = block(run(ask="the billing export failed again"), "similar_prior_work")["text"]
    assert "you were asked:" in text  # the briefing missed the deadline: the offline briefing instead
    server.release()
    sent, charged = settled(server)
    assert sent["episode_summary"] == 1 and charged == sent


def test_compaction_is_charged_and_runs_with_the_budget_spent(seat, slow_server, company):
    from django.utils import timezone

    from core import budgets

    now = timezone.now()
    knobs = replace(schema.EpisodeLifecycle(), max_raw_episodes_per_agent=3)
    server = slow_server(0.2, learning=replace(schema.Learning(), episode_lifecycle=knobs))
    company.token_budget = 10
    company.save()
    budgets.charge(seat, 10)  # the room is spent: a background pass does not read it
    long_outcome = "The nightly export failed because the disk was full. " * 8  # ~430 bytes, over 280
    for i in range(4):
        aged_turn(seat, age_days=1, now=now, tools=(f"young{i}",))
    for i in range(4):
        aged_turn(seat, age_days=40 + i, now=now, tools=("git_clone", "run_tests", "open_pr"), run_id=f"run-{i}",
                  plan_summary=long_outcome)
    report = lifecycle.run_lifecycle(now=now)
    assert report["clusters_folded"] == 1
    sent, charged = settled(server)
    assert sent["condense"] == 4 and sent["compaction_summary"] == 1 and charged == sent


def test_a_prefetch_call_no_block_collected_is_charged(seat, slow_server, run, monkeypatch):  # noqa: F811
    from knowledge.pages import save_page
    from learning.prefetch import knowledge_block

    server = slow_server(0.0, knowledge=schema.Knowledge(backend="native", scope=["ENG"]))
    save_page(container_key="ENG", title="Key rotation runbook", body="steps to rotate the payment signing key")

    def fails_before_collecting(ctx, future):
        for _ in range(500):  # once its call has reached the server
            if server.requests:
                break
            time.sleep(0.02)
        raise RuntimeError("the block broke before it read its answer")

    monkeypatch.setattr(knowledge_block, "_finish", fails_before_collecting)
    result = run(ask="How do we rotate the payment signing key?")
    assert block(result, "relevant_knowledge")["text"] == ""
    sent, charged = settled(server)
    assert sent["knowledge_query"] == 1 and charged == sent
