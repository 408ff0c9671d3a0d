"""publish_memory / reject_memory / review_recommendation over HTTP."""

from __future__ import annotations

import json

from core.providers.llm.scripted import ScriptedProvider
from learning.purposes import transcript_judge
from learning.transcripts.models import Recommendation, Shard
from tests.factories import SeatFactory, operator_token, token_for
from tests.learning.transcripts.conftest import make, vec

LESSON = "Tests run with `make test`, never bare pytest."


def test_a_seat_publishes_its_own_candidate_and_the_judge_may_decline(api_client, scripted_seat):
    ScriptedProvider.queue(transcript_judge.NAME, json.dumps({"kept": False, "reason": "not general"}))
    shard = make(scripted_seat, LESSON, "s1", vec(1.0), status=Shard.REVIEW)
    response = api_client.post(f"/api/v1/transcripts/shards/{shard.pk}/publish", token=token_for(scripted_seat))
    assert response.status_code == 200, response.content
    assert response.json() == {"shard_id": shard.pk, "status": "not_kept", "kept": False, "reason": "not kept: not general"}


def test_a_seat_cannot_touch_another_seats_shard(api_client, seat, other_seat):
    shard = make(other_seat, LESSON, "s1", vec(1.0))
    response = api_client.post(f"/api/v1/transcripts/shards/{shard.pk}/reject", token=token_for(seat))
    assert response.status_code == 404
    shard.refresh_from_db()
    assert shard.status == Shard.PENDING


def test_reject_memory_over_http(api_client, seat):
    shard = make(seat, LESSON, "s1", vec(1.0))
    response = api_client.post(f"/api/v1/transcripts/shards/{shard.pk}/reject", token=token_for(seat))
    assert response.status_code == 200 and response.json()["status"] == "rejected"
    shard.refresh_from_db()
    assert shard.rejected_by == Shard.BY_SEAT


def test_rejecting_a_published_lesson_is_a_conflict(api_client, seat):
    shard = make(seat, LESSON, "s1", vec(1.0), status=Shard.PUBLISHED)
    assert api_client.post(f"/api/v1/transcripts/shards/{shard.pk}/reject", token=token_for(seat)).status_code == 409


def test_an_operator_acts_on_any_shard_of_its_company_only(api_client, seat):
    from tests.factories import CompanyFactory

    mine = make(seat, LESSON, "s1", vec(1.0))
    theirs = make(SeatFactory(company=CompanyFactory(name="Other")), LESSON, "s1", vec(1.0))
    token = operator_token(seat.company)
    assert api_client.post(f"/api/v1/transcripts/shards/{mine.pk}/reject", token=token).status_code == 200
    assert api_client.post(f"/api/v1/transcripts/shards/{theirs.pk}/reject", token=token).status_code == 404
    mine.refresh_from_db()
    assert mine.rejected_by == Shard.BY_PERSON


def _rec(seat, tmp_path, mode=Recommendation.EDIT):
    return Recommendation.objects.create(seat=seat, repo_root=str(tmp_path), tier="rule", mode=mode, scope="x", scope_key="x",
                                         target_path="CLAUDE.md", contents="- rule\n", diff="+- rule\n")


def test_review_over_http_writes_zero_bytes_and_returns_the_contents(api_client, seat, tmp_path):
    rec = _rec(seat, tmp_path)
    response = api_client.post(f"/api/v1/transcripts/recommendations/{rec.pk}/review", {"approve": True}, token=operator_token(seat.company))
    assert response.status_code == 200
    body = response.json()
    assert body["wrote_bytes"] == 0 and body["contents"] == "- rule\n" and body["status"] == "approved"
    assert list(tmp_path.iterdir()) == []


def test_review_is_for_operators_not_seats(api_client, seat, tmp_path):
    rec = _rec(seat, tmp_path)
    response = api_client.post(f"/api/v1/transcripts/recommendations/{rec.pk}/review", {"approve": True}, token=token_for(seat))
    assert response.status_code == 401


def test_install_over_http_refuses_an_edit(api_client, seat, tmp_path):
    rec = _rec(seat, tmp_path)
    rec.status = Recommendation.APPROVED
    rec.save()
    response = api_client.post(f"/api/v1/transcripts/recommendations/{rec.pk}/install", token=operator_token(seat.company))
    assert response.status_code == 409 and list(tmp_path.iterdir()) == []
