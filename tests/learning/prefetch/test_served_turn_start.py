"""Served over HTTP, a turn start writes its frozen prefix before it answers and its other writes once the
response is sent: the spend, the stamps and the events land when the server closes the response."""

from __future__ import annotations

import json
import threading

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connections
from django.test import RequestFactory

from core.models import Event
from learning.models import DiaryEntry, PrefetchSnapshot, Turn
from tests.factories import token_for
from tests.learning.memory_rows import note, skill
from tests.learning.reflect.conftest import record


@pytest.fixture
def served(db):
    """A WSGI server's part, done by hand: the handler's response, left open until the test closes it (or,
    as a server would, once the test is over)."""
    # as Django's test client does: the signals would close the test's connection and its transaction
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    responses = []
    try:
        def serve(path: str, body: dict, token: str):
            request = RequestFactory().post(path, json.dumps(body), content_type="application/json",
                                            HTTP_AUTHORIZATION=f"Bearer {token}")
            responses.append(WSGIHandler()(request.environ, lambda status, headers: None))
            return responses[-1]

        yield serve
        for response in responses:
            response.close()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def test_the_turn_starts_bookkeeping_waits_until_its_response_is_closed(served, seat):
    note(seat, "The billing export runs nightly at 02:00")
    response = served(f"/api/v1/agents/{seat.handle}/prefetch",
                      {"run_id": "turn-1", "ask": "the billing export failed again; can you restart it?"},
                      token_for(seat))

    answer = json.loads(response.content)
    assert response.status_code == 200 and answer["frozen"] is False
    assert "billing export runs nightly" in answer["prompt"]
    assert PrefetchSnapshot.objects.get(seat=seat, run_id="turn-1").rendered["prompt"] == answer["prompt"]
    assert not Event.objects.filter(turn_id="turn-1").exists()  # the bookkeeping waits ...
    assert not DiaryEntry.objects.filter(seat=seat, use_count=1).exists()

    response.close()  # ... until the server has sent the last byte

    assert Event.objects.filter(turn_id="turn-1", name="prefetch_summary").count() == 1
    assert DiaryEntry.objects.filter(seat=seat, use_count=1).exists()


def test_a_repeat_after_the_writes_gets_the_same_prefix_back_frozen(served, seat):
    note(seat, "The billing export runs nightly at 02:00")
    body = {"run_id": "turn-2", "ask": "the billing export failed again"}
    first = served(f"/api/v1/agents/{seat.handle}/prefetch", body, token_for(seat))
    first.close()
    again = served(f"/api/v1/agents/{seat.handle}/prefetch", body, token_for(seat))
    again.close()

    assert json.loads(again.content) == {**json.loads(first.content), "frozen": True}


def test_a_repeat_on_the_same_thread_before_the_response_is_closed_gets_the_frozen_prefix(served, seat):
    note(seat, "The billing export runs nightly at 02:00")
    body = {"run_id": "turn-3", "ask": "the billing export failed again"}
    first = served(f"/api/v1/agents/{seat.handle}/prefetch", body, token_for(seat))  # sent, not yet closed

    again = served(f"/api/v1/agents/{seat.handle}/prefetch", body, token_for(seat))
    again.close()
    first.close()

    assert json.loads(again.content) == {**json.loads(first.content), "frozen": True}
    assert PrefetchSnapshot.objects.filter(seat=seat, run_id="turn-3").count() == 1
    assert Event.objects.filter(turn_id="turn-3", name="prefetch_summary").count() == 1  # written once


@pytest.mark.django_db(transaction=True)
def test_a_repeat_from_another_worker_before_the_first_response_is_closed_gets_the_frozen_prefix(served, seat):
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
    first["response"].close()  # the first worker's bookkeeping; the repeat made none
    assert Event.objects.filter(turn_id="turn-7", name="prefetch_summary").count() == 1


def test_the_turn_completed_before_the_response_is_closed_still_gets_the_offered_skills(served, seat):
    skill(seat, "restart-export", "restart the nightly billing export")
    started = served(f"/api/v1/agents/{seat.handle}/prefetch",
                     {"run_id": "turn-5", "ask": "restart the nightly billing export"}, token_for(seat))
    offered = json.loads(started.content)["skills_offered"]

    body = record(seat, run_id="turn-5", interactions=[])
    del body["skills_offered"]  # the runtime leaves them to the run's frozen prefix
    accepted = served("/api/v1/turns", body, token_for(seat))
    accepted.close()

    assert accepted.status_code == 202
    assert offered and Turn.objects.get(seat=seat, run_id="turn-5").payload["skills_offered"] == offered


def test_writes_whose_response_was_never_closed_run_before_that_threads_next_request(served, seat):
    served(f"/api/v1/agents/{seat.handle}/prefetch", {"run_id": "turn-4", "ask": "the billing export"},
           token_for(seat))  # a client that reads the response and drops it: the server never closes it
    assert not Event.objects.filter(turn_id="turn-4").exists()

    served(f"/api/v1/agents/{seat.handle}/prefetch", {"run_id": "turn-6", "ask": "anything"}, token_for(seat))

    assert Event.objects.filter(turn_id="turn-4", name="prefetch_summary").count() == 1


def test_a_request_with_nothing_to_do_later_is_answered_as_before(served, seat):
    response = served(f"/api/v1/agents/{seat.handle}/prefetch", {"ask": "no run id"}, token_for(seat))
    response.close()

    assert response.status_code == 422 and "run_id" in response.content.decode()
    assert not PrefetchSnapshot.objects.exists()
