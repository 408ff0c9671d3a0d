"""Served over HTTP, a turn start's writes are made once its response is sent: the runtime has its prefix
first, and the frozen prefix, the spend, the stamps and the events all land when the server closes it."""

from __future__ import annotations

import json
import threading

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connections
from django.test import RequestFactory

from core.models import Event
from learning.models import DiaryEntry, PrefetchSnapshot
from tests.factories import token_for
from tests.learning.memory_rows import note


@pytest.fixture
def served(db):
    """A WSGI server's part, done by hand: the handler's response, left open until the test closes it."""
    # as Django's test client does: the signals would close the test's connection and its transaction
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        def serve(path: str, body: dict, token: str):
            request = RequestFactory().post(path, json.dumps(body), content_type="application/json",
                                            HTTP_AUTHORIZATION=f"Bearer {token}")
            return WSGIHandler()(request.environ, lambda status, headers: None)

        yield serve
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def test_the_turn_starts_writes_wait_until_its_response_is_closed(served, seat):
    note(seat, "The billing export runs nightly at 02:00")
    response = served(f"/api/v1/agents/{seat.handle}/prefetch",
                      {"run_id": "turn-1", "ask": "the billing export failed again; can you restart it?"},
                      token_for(seat))

    answer = json.loads(response.content)
    assert response.status_code == 200 and answer["frozen"] is False
    assert "billing export runs nightly" in answer["prompt"]  # the runtime has its prefix ...
    assert not PrefetchSnapshot.objects.filter(seat=seat, run_id="turn-1").exists()  # ... before any write
    assert not Event.objects.filter(turn_id="turn-1").exists()
    assert not DiaryEntry.objects.filter(seat=seat, use_count=1).exists()

    response.close()  # the server has sent the last byte

    assert PrefetchSnapshot.objects.get(seat=seat, run_id="turn-1").rendered["prompt"] == answer["prompt"]
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


@pytest.mark.django_db(transaction=True)
def test_a_repeat_arriving_before_the_writes_waits_for_them_and_gets_the_frozen_prefix(served, seat):
    note(seat, "The billing export runs nightly at 02:00")
    body = {"run_id": "turn-3", "ask": "the billing export failed again"}
    first = served(f"/api/v1/agents/{seat.handle}/prefetch", body, token_for(seat))

    def sent_a_moment_later():  # the server closes the first response while the repeat is being served
        first.close()
        connections.close_all()

    closer = threading.Timer(0.3, sent_a_moment_later)
    closer.start()
    again = served(f"/api/v1/agents/{seat.handle}/prefetch", body, token_for(seat))
    again.close()
    closer.join()

    assert json.loads(again.content) == {**json.loads(first.content), "frozen": True}
    assert PrefetchSnapshot.objects.filter(seat=seat, run_id="turn-3").count() == 1


def test_a_request_with_nothing_to_do_later_is_answered_as_before(served, seat):
    response = served(f"/api/v1/agents/{seat.handle}/prefetch", {"ask": "no run id"}, token_for(seat))
    response.close()

    assert response.status_code == 422 and "run_id" in response.content.decode()
    assert not PrefetchSnapshot.objects.exists()
