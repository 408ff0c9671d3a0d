"""The backlog sweep and redelivery: every stored turn is reflected once, eventually."""

from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone
from django_q.models import OrmQ

from learning.models import Episode, Turn
from learning.reflection import dispatcher, sweep
from learning.reflection.ring import RING
from learning.reflection.service import reflect_turn
from tests.learning.reflection.conftest import lose_its_task


@pytest.fixture
def sync_queue(monkeypatch):
    from django_q.conf import Conf

    monkeypatch.setattr(Conf, "SYNC", True)


def later(seconds=None):
    return timezone.now() + timedelta(seconds=(seconds if seconds is not None else sweep.grace_seconds()) + 1)


def test_a_turn_whose_enqueue_failed_is_reflected_by_the_sweep_once_no_task_can_be_alive(seat, make_turn, sync_queue):
    turn = lose_its_task(make_turn)
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
    turns = [lose_its_task(make_turn) for _ in range(3)]
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
    from learning.passes import schedules

    loop = schedules.LOOPS["reflect_sweep"]
    assert loop.service == "learning.reflection.sweep.run_sweep" and loop.minutes(None) == 1


def after_a_stall(seconds: float = 1.0):
    return timezone.now() + timedelta(seconds=sweep.stall_seconds() + seconds)


def test_a_seat_whose_last_turn_was_lost_is_re_driven_after_a_stall_not_the_whole_grace(seat, make_turn, sync_queue):
    assert sweep.stall_seconds() < sweep.grace_seconds()
    turn = lose_its_task(make_turn)
    assert sweep.run_sweep()["redriven"] == 0  # younger than a stall span: its task may still be queued
    assert sweep.run_sweep(now=after_a_stall())["redriven"] == 1
    turn.refresh_from_db()
    assert turn.reflected_at is not None and Episode.objects.filter(run_id=turn.run_id).count() == 1
    assert sweep.run_sweep(now=after_a_stall(2))["redriven"] == 0


@pytest.mark.django_db(transaction=True)
def test_a_seat_with_a_pass_running_is_left_to_that_pass(seat, other_seat, make_turn):
    import threading

    from django.db import connections

    from learning.reflection.lock import seat_lock

    held, release = threading.Event(), threading.Event()

    def holder():
        try:
            with seat_lock(seat):
                held.set()
                release.wait(30)
        finally:
            connections.close_all()

    lose_its_task(make_turn)
    lost_elsewhere = lose_its_task(make_turn, other_seat)
    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert held.wait(10)
        assert sweep.stalled(now=after_a_stall()) == [(lost_elsewhere.pk, other_seat.pk)]
    finally:
        release.set()
        thread.join(30)


def test_a_seat_reflected_within_a_lease_waits_for_the_grace(seat, make_turn):
    lost = lose_its_task(make_turn)
    recent = make_turn()
    now = after_a_stall()
    Turn.objects.filter(pk=recent.pk).update(reflected_at=now)  # the seat's queue is moving
    assert sweep.stalled(now=now) == []
    assert Turn.objects.get(pk=lost.pk).reflected_at is None


def test_turns_their_seats_later_turns_passed_over_are_re_driven_a_lease_after_them(seat, make_turn):
    """A killed cluster loses every task it held in memory; the seat's later tasks run on the next one."""
    lost = [lose_its_task(make_turn), lose_its_task(make_turn)]
    later_turn = make_turn()
    still_queued = lose_its_task(make_turn)  # after the last reflected turn: its task may yet run
    now = after_a_stall()
    Turn.objects.filter(pk=later_turn.pk).update(reflected_at=timezone.now())  # its task ran; the lost ones' died
    Turn.objects.filter(pk=make_turn().pk).update(reflected_at=now)  # and the seat's queue is still moving
    assert sweep.stalled(now=now) == [(turn.pk, seat.pk) for turn in lost]
    assert sweep.run_sweep(now=now)["redriven"] == 2
    assert Turn.objects.get(pk=still_queued.pk).redriven_at is None
