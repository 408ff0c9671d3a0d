"""Served over HTTP, a turn start answers once its frozen prefix and its other writes (the spend, the
stamps, the events) are committed: whatever the runtime does next finds them written."""

from __future__ import annotations

import json
import threading

import pytest
from django.db import connections
from django.test import Client

from core.models import Event
from learning.models import DiaryEntry, PrefetchSnapshot, Turn
from tests.factories import token_for
from tests.learning.memory.rows import note, skill
from tests.learning.reflection.conftest import record


@pytest.fixture
def served(db):
    """POST a JSON body with a seat's bearer token; the response."""
    client = Client()

    def serve(path: str, body: dict, token: str):
        return client.post(path, json.dumps(body), content_type="application/json",
                           HTTP_AUTHORIZATION=f"Bearer {token}")

    return serve


def test_the_turn_starts_writes_are_committed_when_it_answers(served, seat):
    note(seat, "The billing export runs nightly at 02:00")
    response = served(f"/api/v1/agents/{seat.handle}/prefetch",
                      {"run_id": "turn-1", "ask": "the billing export failed again; can you restart it?"},
                      token_for(seat))

    answer = json.loads(response.content)
    assert response.status_code == 200 and answer["frozen"] is False
    assert "billing export runs nightly" in answer["prompt"]
    assert PrefetchSnapshot.objects.get(seat=seat, run_id="turn-1").rendered["prompt"] == answer["prompt"]
    assert Event.objects.filter(turn_id="turn-1", name="prefetch_summary").count() == 1
    assert DiaryEntry.objects.filter(seat=seat, use_count=1).exists()


def test_a_repeat_gets_the_same_prefix_back_frozen_and_writes_nothing_again(served, seat):
    note(seat, "The billing export runs nightly at 02:00")
    body = {"run_id": "turn-2", "ask": "the billing export failed again"}
    first = served(f"/api/v1/agents/{seat.handle}/prefetch", body, token_for(seat))
    again = served(f"/api/v1/agents/{seat.handle}/prefetch", body, token_for(seat))

    assert json.loads(again.content) == {**json.loads(first.content), "frozen": True}
    assert PrefetchSnapshot.objects.filter(seat=seat, run_id="turn-2").count() == 1
    assert Event.objects.filter(turn_id="turn-2", name="prefetch_summary").count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_repeat_served_by_another_worker_gets_the_frozen_prefix(served, seat):
    note(seat, "The billing export runs nightly at 02:00")
    body = {"run_id": "turn-7", "ask": "the billing export failed again"}
    first = {}

    def served_by_another_worker_thread():
        first["response"] = served(f"/api/v1/agents/{seat.handle}/prefetch", body, token_for(seat))
        connections.close_all()

    worker = threading.Thread(target=served_by_another_worker_thread)
    worker.start()
    worker.join()
    again = served(f"/api/v1/agents/{seat.handle}/prefetch", body, token_for(seat))

    assert json.loads(again.content) == {**json.loads(first["response"].content), "frozen": True}
    assert PrefetchSnapshot.objects.filter(seat=seat, run_id="turn-7").count() == 1
    assert Event.objects.filter(turn_id="turn-7", name="prefetch_summary").count() == 1


def test_the_turn_completed_after_its_start_gets_the_offered_skills(served, seat):
    skill(seat, "restart-export", "restart the nightly billing export")
    started = served(f"/api/v1/agents/{seat.handle}/prefetch",
                     {"run_id": "turn-5", "ask": "restart the nightly billing export"}, token_for(seat))
    offered = json.loads(started.content)["skills_offered"]

    body = record(seat, run_id="turn-5", interactions=[])
    del body["skills_offered"]  # the runtime leaves them to the run's frozen prefix
    accepted = served("/api/v1/turns", body, token_for(seat))

    assert accepted.status_code == 202
    assert offered and Turn.objects.get(seat=seat, run_id="turn-5").payload["skills_offered"] == offered


def test_a_request_without_a_run_id_is_refused_naming_it(served, seat):
    response = served(f"/api/v1/agents/{seat.handle}/prefetch", {"ask": "no run id"}, token_for(seat))

    assert response.status_code == 422 and "run_id" in response.content.decode()
    assert not PrefetchSnapshot.objects.exists()
