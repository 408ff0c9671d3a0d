"""The ladder: vetoes first and never outvoted, distinct sources, the vetted-only pool, the judge."""

from __future__ import annotations

import json

import pytest

from core.models import Event
from core.providers.llm.scripted import ScriptedProvider
from crewlet.config import schema
from crewlet.errors import Conflict
from learning.purposes import transcript_judge
from learning.transcripts import ladder
from learning.transcripts.models import Shard
from tests.learning.transcripts.conftest import make, vec

LESSON = "Tests run with `make test`, never bare pytest."


def test_resembling_a_rejected_shard_is_a_veto(seat):
    make(seat, "old", "s0", vec(0.86), status=Shard.REJECTED, rejected_by=Shard.BY_PERSON)
    shard = make(seat, LESSON, "s1", vec(1.0))
    outcome = ladder.evaluate(shard)
    assert outcome.status == Shard.REJECTED and "resembles rejected" in outcome.reason


def test_below_the_rejected_threshold_is_no_veto(seat):
    make(seat, "old", "s0", vec(0.84), status=Shard.REJECTED, rejected_by=Shard.BY_PERSON)
    assert ladder.evaluate(make(seat, LESSON, "s1", vec(1.0))).status == Shard.PENDING


def test_a_near_duplicate_of_a_published_shard_is_a_veto(seat):
    make(seat, "published", "s0", vec(0.96), status=Shard.PUBLISHED)
    outcome = ladder.evaluate(make(seat, LESSON, "s1", vec(1.0)))
    assert outcome.status == Shard.REJECTED and "near-duplicate of published" in outcome.reason


def test_a_veto_is_not_outvoted_by_recurrence_across_sources(seat):
    make(seat, "rejected", "s0", vec(0.9, axis=2), status=Shard.REJECTED, rejected_by=Shard.BY_PERSON)
    make(seat, LESSON, "s2", vec(1.0))
    make(seat, LESSON, "s3", vec(1.0))
    outcome = ladder.evaluate(make(seat, LESSON, "s1", vec(1.0)))
    assert outcome.status == Shard.REJECTED


def test_a_veto_is_not_outvoted_by_corroboration(seat):
    make(seat, "vetted", "s0", vec(0.97), status=Shard.PUBLISHED)
    assert ladder.evaluate(make(seat, LESSON, "s1", vec(1.0))).status == Shard.REJECTED


def test_three_repeats_in_one_session_count_as_one_source_and_go_to_review(seat):
    first = make(seat, LESSON, "s1", vec(1.0))
    second = make(seat, LESSON, "s1", vec(1.0))
    third = make(seat, LESSON, "s1", vec(1.0))
    outcome = ladder.evaluate(third)
    assert outcome.status == Shard.REVIEW
    assert outcome.evidence["distinct_sources"] == 1 and outcome.evidence["occurrences"] == 3
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.status == second.status == Shard.ABSORBED and first.absorbed_into_id == third.pk


def test_three_sessions_count_as_three_and_are_accepted(seat):
    make(seat, LESSON, "s1", vec(1.0))
    make(seat, LESSON, "s2", vec(1.0))
    outcome = ladder.evaluate(make(seat, LESSON, "s3", vec(1.0)))
    assert outcome.status == Shard.ACCEPTED and outcome.evidence["distinct_sources"] == 3


def test_sources_folded_into_a_review_shard_still_count(seat):
    make(seat, LESSON, "s1", vec(1.0))
    review = make(seat, LESSON, "s1", vec(1.0))
    ladder.evaluate(review)
    outcome = ladder.evaluate(make(seat, LESSON, "s2", vec(1.0)))
    assert outcome.status == Shard.ACCEPTED
    assert outcome.evidence["sources"] == ["s1", "s2"] and outcome.evidence["occurrences"] == 3


def test_the_distinct_source_minimum_is_a_knob(seat, serve_config):
    serve_config(transcripts=schema.Transcripts(ladder=schema.Ladder(min_distinct_sources=3)))
    make(seat, LESSON, "s1", vec(1.0))
    assert ladder.evaluate(make(seat, LESSON, "s2", vec(1.0))).status == Shard.REVIEW


def test_corroboration_by_a_vetted_shard_accepts(seat):
    vetted = make(seat, "vetted", "s0", vec(0.9), status=Shard.PUBLISHED)
    outcome = ladder.evaluate(make(seat, LESSON, "s1", vec(1.0)))
    assert outcome.status == Shard.ACCEPTED and outcome.evidence["corroborated_by"] == vetted.pk


@pytest.mark.parametrize("status", [Shard.ACCEPTED, Shard.NOT_KEPT, Shard.ABSORBED, Shard.REJECTED])
def test_the_corroboration_pool_holds_vetted_shards_only(seat, status):
    make(seat, "unvetted", "s0", vec(0.9), status=status, rejected_by=Shard.BY_LADDER)
    assert ladder.evaluate(make(seat, LESSON, "s1", vec(1.0))).status == Shard.PENDING


def test_an_unvetted_candidate_from_the_same_session_never_vouches(seat):
    make(seat, "same run", "s1", vec(0.9))
    assert ladder.evaluate(make(seat, LESSON, "s1", vec(1.0))).status == Shard.REVIEW


def test_below_the_corroboration_threshold_stays_pending(seat):
    make(seat, "vetted", "s0", vec(0.87), status=Shard.PUBLISHED)
    assert ladder.evaluate(make(seat, LESSON, "s1", vec(1.0))).status == Shard.PENDING


def test_another_companys_shards_are_not_compared(seat, django_user_model):
    from tests.factories import CompanyFactory, SeatFactory

    stranger = SeatFactory(company=CompanyFactory(name="Other"))
    make(stranger, "theirs", "s0", vec(1.0), status=Shard.REJECTED, rejected_by=Shard.BY_PERSON)
    assert ladder.evaluate(make(seat, LESSON, "s1", vec(1.0))).status == Shard.PENDING


def test_the_judge_answering_kept_false_is_an_ordinary_answer(scripted_seat):
    ScriptedProvider.queue(transcript_judge.NAME, json.dumps({"kept": False, "reason": "true only on one laptop"}))
    shard = make(scripted_seat, LESSON, "s1", vec(1.0), status=Shard.REVIEW)
    answer = ladder.publish_memory(shard=shard, submitted_by="ana")
    shard.refresh_from_db()
    assert answer == {"shard_id": shard.pk, "status": Shard.NOT_KEPT, "kept": False, "reason": "not kept: true only on one laptop"}
    assert shard.status == Shard.NOT_KEPT and shard.published_at is None
    assert shard.judge_verdict["kept"] is False
    assert Event.objects.filter(name="shard_judged", payload__kept=False).count() == 1


def test_the_judge_keeping_it_publishes(scripted_seat):
    ScriptedProvider.queue(transcript_judge.NAME, json.dumps({"kept": True, "reason": "general"}))
    shard = make(scripted_seat, LESSON, "s1", vec(1.0), status=Shard.REVIEW)
    assert ladder.publish_memory(shard=shard)["kept"] is True
    shard.refresh_from_db()
    assert shard.status == Shard.PUBLISHED and shard.published_at is not None


def test_publish_checks_the_vetoes_first_and_asks_no_judge(scripted_seat):
    make(scripted_seat, "rejected", "s0", vec(0.9), status=Shard.REJECTED, rejected_by=Shard.BY_PERSON)
    shard = make(scripted_seat, LESSON, "s1", vec(1.0), status=Shard.REVIEW)
    answer = ladder.publish_memory(shard=shard, submitted_by="lead")
    assert answer["status"] == Shard.REJECTED and answer["kept"] is False
    assert [c for c in ScriptedProvider.calls if c["purpose"] == transcript_judge.NAME] == []


def test_reject_memory_needs_no_judge(scripted_seat):
    shard = make(scripted_seat, LESSON, "s1", vec(1.0))
    answer = ladder.reject_memory(shard=shard, by=Shard.BY_SEAT, actor="ana")
    assert answer["status"] == Shard.REJECTED
    assert ScriptedProvider.calls == []
    shard.refresh_from_db()
    assert shard.rejected_by == Shard.BY_SEAT


def test_rejecting_a_published_lesson_is_refused(seat):
    shard = make(seat, LESSON, "s1", vec(1.0), status=Shard.PUBLISHED)
    with pytest.raises(Conflict):
        ladder.reject_memory(shard=shard, by=Shard.BY_SEAT)


def test_a_ladder_veto_does_not_join_the_rejected_pool(seat):
    make(seat, "published", "s0", vec(0.96, axis=2), status=Shard.PUBLISHED)
    vetoed = make(seat, LESSON, "s1", vec(1.0))
    assert ladder.evaluate(vetoed).status == Shard.REJECTED
    # similar to the vetoed copy but not to the published one: no veto by association
    other = make(seat, "related", "s2", vec(0.9, axis=3))
    assert ladder.evaluate(other).status == Shard.PENDING


# ---- the in-memory pool: the same rules as ranking in SQL ----------------------------------------


def _both(seat, build):
    """Each shard built by ``build`` decided by SQL ranking and by the in-memory pool: the outcomes agree."""
    shard = build()
    by_sql = ladder.decide(shard)
    pool = ladder.Pool(seat.company_id, shard.embedding_model, shard.embedding_dim)
    by_pool = ladder.decide(shard, pool)
    assert (by_pool.status, by_pool.reason, by_pool.evidence) == (by_sql.status, by_sql.reason, by_sql.evidence)
    return by_pool


@pytest.mark.parametrize("scenario,status", [
    ("rejected", Shard.REJECTED), ("rejected_by_ladder", Shard.PENDING), ("duplicate", Shard.REJECTED),
    ("recurs", Shard.ACCEPTED), ("same_session", Shard.REVIEW), ("corroborated", Shard.ACCEPTED), ("alone", Shard.PENDING),
])
def test_the_pool_decides_as_sql_ranking_does(seat, scenario, status):
    if scenario == "rejected":
        make(seat, "old", "s0", vec(0.86), status=Shard.REJECTED, rejected_by=Shard.BY_PERSON)
    elif scenario == "rejected_by_ladder":
        make(seat, "old", "s0", vec(0.99), status=Shard.REJECTED, rejected_by=Shard.BY_LADDER)
    elif scenario == "duplicate":
        make(seat, "published", "s0", vec(0.96), status=Shard.PUBLISHED)
    elif scenario == "recurs":
        make(seat, LESSON, "s2", vec(0.95))
        make(seat, LESSON, "s3", vec(0.9, axis=2))
    elif scenario == "same_session":
        make(seat, LESSON, "s1", vec(1.0))
    elif scenario == "corroborated":
        make(seat, "vetted", "s0", vec(0.9), status=Shard.PUBLISHED)
    assert _both(seat, lambda: make(seat, LESSON, "s1", vec(1.0))).status == status
