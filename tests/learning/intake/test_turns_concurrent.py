"""POST /turns from concurrent clients: each client gets its own answer, each new turn is stored
once with exactly one task, and a repeat among them answers as a repeat.

Real threads, each with its own database connection, against the server's own commit path (no test
transaction around it).
"""

import json
import threading

import pytest
from django.db import connections
from django.test import Client
from django_q.models import OrmQ

from learning.models import Turn
from tests.factories import token_for
from tests.learning.reflection.conftest import record

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/api/v1/turns"


def post(token, body) -> tuple[int, dict]:
    response = Client().post(URL, json.dumps(body), content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}")
    return response.status_code, response.json()


def post_concurrently(token, bodies: list[dict]) -> dict[str, tuple[int, dict]]:
    answers, errors = {}, []
    start = threading.Barrier(len(bodies))

    def client(body):
        try:
            start.wait(30)
            answers[body["run_id"]] = post(token, body)
        except BaseException as exc:  # surfaced in the test's thread
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=client, args=(body,)) for body in bodies]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert not any(t.is_alive() for t in threads)
    return answers


def tasks_by_turn() -> dict[int, int]:
    out: dict[int, int] = {}
    for row in OrmQ.objects.all():
        (turn_id,) = row.task["args"]
        out[turn_id] = out.get(turn_id, 0) + 1
    return out


def test_concurrent_posts_each_get_their_own_turn_and_one_task(seat):
    token = token_for(seat)
    bodies = [record(seat, ask="check the export", skills_offered=[]) for _ in range(6)]

    answers = post_concurrently(token, bodies)

    stored = dict(Turn.objects.values_list("run_id", "pk"))
    assert len(stored) == 6
    for body in bodies:
        status, answer = answers[body["run_id"]]
        assert status == 202 and answer == {"turn_id": stored[body["run_id"]], "run_id": body["run_id"], "status": "accepted"}
    assert tasks_by_turn() == {pk: 1 for pk in stored.values()}
    assert all(row.task["group"] == f"seat-{seat.pk}" for row in OrmQ.objects.all())


def test_a_repeat_among_concurrent_posts_answers_as_a_repeat_and_the_others_are_stored(seat):
    token = token_for(seat)
    repeated, changed = record(seat), record(seat)
    for body in (repeated, changed):
        assert post(token, body)[0] == 202
    new = [record(seat) for _ in range(3)]
    changed_again = {**changed, "plan_summary": "something else entirely"}

    answers = post_concurrently(token, [repeated, *new, changed_again])

    assert answers[repeated["run_id"]][0] == 200 and answers[repeated["run_id"]][1]["status"] == "duplicate"
    status, conflict = answers[changed["run_id"]]
    assert status == 409 and conflict["differing_fields"] == ["plan_summary"]
    assert all(answers[body["run_id"]][0] == 202 for body in new)
    assert Turn.objects.count() == 5 and len(tasks_by_turn()) == 5
