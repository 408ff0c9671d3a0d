"""A recall says when none of the seat's turns is like the ask at all (``unlike``): turns written by a real
reflection of tau-bench dev runs, asked through ``query_episodes`` and the turn start, with the packaged
sentence model."""

from __future__ import annotations

import functools
from datetime import timedelta

import pytest
from django.utils import timezone

from core.providers.embeddings import likeness, reset_embedder
from crewlet.config import schema
from learning import tools
from learning.memory import episode_search
from learning.passes.embed_fill import run_fill
from learning.prefetch import PrefetchRequest, prefetch
from learning.review import health
from learning.tools.query_episodes import UNLIKE
from tests import dev_data
from tests.learning.reflection.tau_turns import post_and_reflect

pytestmark = pytest.mark.real_model

TASKS = {4, 6, 10, 17, 20, 23}


@pytest.fixture
def desk(local_embedder, seat):
    """An airline desk's seat: trials 0-2 of six tau-bench dev tasks, posted and reflected."""
    runs = sorted((r for r in dev_data.tau_runs() if r["trial"] < 3 and r["task_id"] in TASKS),
                  key=lambda r: (r["trial"], r["task_id"]))
    post_and_reflect(runs, lambda run: seat)
    run_fill(seat=seat)
    return seat


@pytest.fixture
def call(desk):
    """``query_episodes`` as the desk's agent calls it."""
    return functools.partial(tools.run, seat=desk, name="query_episodes", run_id="run-likeness")


def elsewhere() -> list[str]:
    """Questions about another conversation altogether (LoCoMo's), which no airline turn is like."""
    return [q["question"] for q in dev_data.locomo()[0]["qa"][:4]]


def opening(task: int) -> str:
    """The 4th trial's opening of a stored task: work the desk has done before."""
    run = next(r for r in dev_data.tau_runs() if r["trial"] == 3 and r["task_id"] == task)
    return next(m["content"] for m in run["traj"] if m.get("role") == "user" and m.get("content"))


def similar_work(seat, ask: str, run_id: str) -> dict:
    result = prefetch(seat=seat, request=PrefetchRequest(run_id=run_id, ask=ask))
    return next(b for b in result["blocks"] if b["name"] == "similar_prior_work")


def test_an_ask_no_past_turn_is_like_is_answered_as_new_work(desk, call):
    for i, question in enumerate(elsewhere()):
        answer = call(arguments={"query": question})
        assert answer.data["unlike"] is True, question
        assert answer.text.startswith(UNLIKE) and answer.data["hits"]  # the nearest still shown, for what they are
        assert answer.data["close_call"] is False  # no close call between turns none of which is like it
        block = similar_work(desk, question, f"start-elsewhere-{i}")
        assert block["hit"] is False and block["text"] == ""  # nothing put in the prompt as similar work
    for task in (10, 17):
        answer = call(arguments={"query": opening(task)})
        assert answer.data["unlike"] is False and UNLIKE not in answer.text
        assert answer.data["hits"][0]["turn_id"].startswith(f"tau-{task}-")
        block = similar_work(desk, opening(task), f"start-known-{task}")
        assert block["hit"] is True and f"tau-{task}-" in block["text"]
    # each turn start says what its recall found: an operator tells "nothing like it" from "nothing stored"
    found = dict(health.similar_work_recall(since=timezone.now() - timedelta(hours=1), seat=desk))
    assert found["unlike"] == len(elsewhere()) and found["shown"] + found["close_call"] == 2
    assert found["none"] == found["failed"] == found["not_searched"] == 0


def test_a_short_query_of_specifics_is_like_the_turns_that_name_them(call):
    """Two airport codes sit far from every whole turn by meaning, but task 17's turns say both."""
    answer = call(arguments={"query": "IAH SEA"})
    assert answer.data["unlike"] is False and UNLIKE not in answer.text
    assert answer.data["hits"][0]["turn_id"].startswith("tau-17-")


def test_the_judgement_follows_the_configured_similarity(call, serve_config):
    question = elsewhere()[0]

    def configured(similar_from: float) -> None:
        serve_config(providers=schema.Providers(llm={"offline": schema.ProviderSpec(kind="offline")},
                                                embeddings=schema.EmbeddingSpec(kind="local", similar_from=similar_from)))
        reset_embedder()

    configured(-1.0)  # turned off: the nearest turns are answered as the most similar, as before
    off = call(arguments={"query": question})
    assert off.data["unlike"] is False and off.text.startswith("Your turns most similar to the query")
    configured(0.05)  # a floor every airline turn clears, even for this question
    assert call(arguments={"query": question}).data["unlike"] is False
    configured(0.99)  # a floor no turn reaches, even for work the desk has done
    assert call(arguments={"query": opening(10)}).data["unlike"] is True


def test_a_turn_is_like_a_query_when_it_holds_every_word_of_it():
    turn = "Hi, I need to reschedule my flight from IAH to SEA from May 23 to May 24."
    assert episode_search.says_every_word("IAH SEA", [turn])
    assert episode_search.says_every_word("flights to sea", ["Nothing here.", turn])  # a plural folded
    assert not episode_search.says_every_word("IAH SEA refund", [turn])  # one word missing
    assert not episode_search.says_every_word("to the", [turn])  # no content word: judged by meaning alone


def test_the_similarity_a_model_is_judged_by():
    assert likeness.similar_from("all-MiniLM-L6-v2", 0.0) == 0.40  # the default config: the model's own
    assert likeness.similar_from("text-embedding-3-small", 0.0) is None  # a model with no known floor is not judged
    assert likeness.similar_from("text-embedding-3-small", 0.3) == 0.3  # a configured floor judges any model
    assert likeness.similar_from("all-MiniLM-L6-v2", -1.0) is None  # turned off
    assert likeness.unlike(0.65, "all-MiniLM-L6-v2", 0.0)  # similarity 0.35
    assert not likeness.unlike(0.55, "all-MiniLM-L6-v2", 0.0)  # similarity 0.45
    assert not likeness.unlike(None, "all-MiniLM-L6-v2", 0.0)  # nothing compared by meaning
    assert not likeness.unlike(0.99, "text-embedding-3-small", 0.0)
