"""POST /turns from concurrent clients: the turns one process's threads post at the same moment share one
transaction (one INSERT of turns, one of tasks, one commit), and each client still gets its own answer.

Real threads, each with its own database connection, against the server's own commit path (no test
transaction around it); the first write is held until the other clients queue behind it, so the
grouping is not left to timing.
"""

import json
import threading
import time

import pytest
from django.db import connections
from django.test import Client
from django_q.models import OrmQ

from learning import turn_rows, turns
from learning.models import Turn
from tests.factories import token_for
from tests.learning.reflect.conftest import record

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/api/v1/turns"


def wait_for(condition, what: str):
    for _ in range(6000):
        if condition():
            return
        time.sleep(0.005)
    raise AssertionError(f"never happened: {what}")


@pytest.fixture
def held_first_write(monkeypatch):
    """Records each INSERT's row count; the first turn INSERT waits until ``hold["behind"]`` posts queue behind it."""
    writes = {"turns": [], "tasks": []}
    hold = {"behind": 0}
    real_turns, real_tasks = turn_rows.insert_turns, turn_rows.insert_tasks

    def insert_turns(batch, **kw):
        writes["turns"].append(len(batch))
        if len(writes["turns"]) == 1:
            wait_for(lambda: turns.shared_commit.waiting() >= hold["behind"], "the other posts queued")
        return real_turns(batch, **kw)

    def insert_tasks(key, packages, lock, **kw):
        writes["tasks"].append(len(packages))
        return real_tasks(key, packages, lock, **kw)

    monkeypatch.setattr(turn_rows, "insert_turns", insert_turns)
    monkeypatch.setattr(turn_rows, "insert_tasks", insert_tasks)
    return writes, hold


def post_concurrently(token, first: dict, rest: list[dict], writes, hold) -> dict[str, tuple[int, dict]]:
    """``first`` posted alone (its write held), then ``rest`` from one thread each while it is held."""
    answers, errors = {}, []

    def client(body):
        try:
            response = Client().post(URL, json.dumps(body), content_type="application/json",
                                     HTTP_AUTHORIZATION=f"Bearer {token}")
            answers[body["run_id"]] = (response.status_code, response.json())
        except BaseException as exc:  # surfaced in the test's thread
            errors.append(exc)
        finally:
            connections.close_all()

    hold["behind"] = len(rest)
    threads = [threading.Thread(target=client, args=(first,))]
    threads[0].start()
    wait_for(lambda: writes["turns"], "the first write started")
    for body in rest:
        threads.append(threading.Thread(target=client, args=(body,)))
        threads[-1].start()
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


def test_posts_queued_behind_a_commit_share_the_next_one_and_each_gets_its_own_turn(seat, held_first_write):
    writes, hold = held_first_write
    token = token_for(seat)
    bodies = [record(seat, ask="check the export", skills_offered=[]) for _ in range(4)]

    answers = post_concurrently(token, bodies[0], bodies[1:], writes, hold)

    assert writes == {"turns": [1, 3], "tasks": [1, 3]}  # two transactions for four turns: one INSERT each per batch
    stored = dict(Turn.objects.values_list("run_id", "pk"))
    assert len(stored) == 4
    for body in bodies:
        status, answer = answers[body["run_id"]]
        assert status == 202 and answer == {"turn_id": stored[body["run_id"]], "run_id": body["run_id"], "status": "accepted"}
    assert tasks_by_turn() == {pk: 1 for pk in stored.values()}  # each committed turn has exactly its one task
    assert all(row.task["group"] == f"seat-{seat.pk}" for row in OrmQ.objects.all())


def test_a_repeat_in_a_shared_batch_answers_as_a_repeat_and_the_others_are_stored(seat, held_first_write):
    writes, hold = held_first_write
    token = token_for(seat)
    repeated, changed = record(seat), record(seat)
    for body in (repeated, changed):
        assert Client().post(URL, json.dumps(body), content_type="application/json",
                             HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 202
    writes["turns"].clear()
    writes["tasks"].clear()
    new = [record(seat) for _ in range(3)]
    changed_again = {**changed, "plan_summary": "something else entirely"}

    answers = post_concurrently(token, new[0], [repeated, new[1], changed_again, new[2]], writes, hold)

    assert writes["turns"][:2] == [1, 4]  # the shared batch's INSERT failed on the repeated run id...
    assert sorted(writes["turns"][2:]) == [1, 1, 1, 1]  # ...so each of its turns was stored alone
    assert answers[repeated["run_id"]][0] == 200 and answers[repeated["run_id"]][1]["status"] == "duplicate"
    status, conflict = answers[changed["run_id"]]
    assert status == 409 and conflict["differing_fields"] == ["plan_summary"]
    assert all(answers[b["run_id"]][0] == 202 for b in new)
    assert Turn.objects.count() == 5
    assert tasks_by_turn() == {pk: 1 for pk in Turn.objects.values_list("pk", flat=True)}
