"""The backlog sweep and redelivery: every stored turn is reflected once, eventually."""

from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone
from django_q.models import OrmQ

from learning.models import Episode, Turn
from learning.reflect import dispatcher, sweep
from learning.reflect.ring import RING
from learning.reflect.service import reflect_turn


@pytest.fixture
def sync_queue(monkeypatch):
    from django_q.conf import Conf

    monkeypatch.setattr(Conf, "SYNC", True)


def later(seconds=None):
    return timezone.now() + timedelta(seconds=(seconds if seconds is not None else sweep.grace_seconds()) + 1)


def test_a_turn_whose_enqueue_failed_is_reflected_by_the_sweep_once_no_task_can_be_alive(seat, make_turn, sync_queue):
    with mock.patch("django_q.tasks.async_task", side_effect=ConnectionError("broker down")):
        turn = make_turn()
    assert Turn.objects.get(pk=turn.pk).reflected_at is None
    assert sweep.run_sweep()["redriven"] == 0  # its own task might still be running
    assert sweep.run_sweep(now=later()) == {"redriven": 1, "left": 0}
    turn.refresh_from_db()
    assert turn.reflected_at is not None and Episode.objects.filter(run_id=turn.run_id).count() == 1


def test_a_no_budget_turn_is_re_driven_and_reflects_once_the_ceiling_moves(seat, make_turn, sync_queue):
    turn = make_turn()
    with mock.patch("core.budgets.has_room", return_value=False):
        assert reflect_turn(turn.pk)["gate"] == "no_budget"
        assert sweep.run_sweep(now=later())["redriven"] == 1  # still no room: re-driven, still owed
    turn.refresh_from_db()
    assert turn.reflected_at is None
    assert sweep.run_sweep(now=later())["redriven"] == 0  # re-driven within the grace: not again yet
    assert sweep.run_sweep(now=later(2 * sweep.grace_seconds()))["redriven"] == 1  # the ceiling moved
    turn.refresh_from_db()
    assert turn.reflected_at is not None


def test_each_tick_re_drives_at_most_its_limit_oldest_first(seat, make_turn):
    with mock.patch("django_q.tasks.async_task", side_effect=ConnectionError("broker down")):
        turns = [make_turn() for _ in range(3)]
    first = sweep.run_sweep(now=later(), limit=2)
    assert first == {"redriven": 2, "left": 1}
    queued = [task.task["args"][0] for task in OrmQ.objects.order_by("id")]
    assert queued == [turns[0].pk, turns[1].pk]
    assert sweep.run_sweep(now=later(), limit=2) == {"redriven": 1, "left": 0}


def test_a_redelivered_pass_replaces_its_episode_instead_of_adding_one(seat, make_turn, ctx_of):
    """The episode and the turn's mark commit together (a worker killed between them leaves neither);
    a turn made unreflected again (its mark cleared) runs again in another process (an empty
    duplicate ring) and the run still has one episode."""
    turn = make_turn(work_key="")
    assert dispatcher.run_pass(ctx_of(turn)).gate is None
    assert Turn.objects.get(pk=turn.pk).reflected_at is not None
    assert Episode.objects.filter(seat=seat, run_id=turn.run_id).count() == 1
    Turn.objects.filter(pk=turn.pk).update(reflected_at=None)
    RING.clear()  # the redelivery runs in a fresh process
    assert reflect_turn(turn.pk)["status"] == "reflected"
    assert Episode.objects.filter(seat=seat, run_id=turn.run_id).count() == 1


def test_the_sweep_is_a_scheduled_loop():
    from learning import schedules

    loop = schedules.LOOPS["reflect_sweep"]
    assert loop.service == "learning.reflect.sweep.run_sweep" and loop.minutes(None) == 1
