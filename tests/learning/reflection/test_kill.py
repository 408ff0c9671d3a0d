"""``kill -9`` of the queue workers mid-pass: every turn is still reflected, once.

Real ``qcluster`` processes on the test database. Turns for three seats are stored through the
production intake (each enqueues its task); once a pass is running (a seat's lock is held) every
worker process is killed with SIGKILL. The cluster's sentinel starts new workers; the killed tasks
are re-driven by the backlog sweep (called here as its schedule would, every few seconds) once no
task of theirs can be alive. The queue's and the sweep's clocks are scaled down together
(``killsettings``) so that "bounded time" is a minute, not ten.
"""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pytest
from django.test import override_settings

from learning.models import Episode, Turn
from learning.reflection.lock import seats_held
from tests.factories import SeatFactory
from tests.learning.passes.test_qcluster import _env, start_cluster, stop, wait_for
from tests.learning.reflection.conftest import store

pytestmark = pytest.mark.django_db(transaction=True)

TURNS = 36
KILLSETTINGS = "tests.learning.reflection.killsettings"


def worker_pids(log: Path) -> list[int]:
    """The cluster's worker processes, as its log names them ("ready for work at PID")."""
    return [int(pid) for pid in re.findall(r"ready for work at (\d+)", log.read_text())]


def a_pass_is_running() -> bool:
    return bool(seats_held(Turn.objects.values_list("seat_id", flat=True).distinct()))


def test_kill_9_of_the_workers_mid_pass_loses_no_turn_and_reflects_none_twice(tmp_path, company, role, unit):
    from learning.reflection import sweep

    seats = [SeatFactory(company=company, role=role, unit=unit, handle=h) for h in ("ana", "bo", "cy")]
    env = _env(CREWLET_Q_NAME="crewlet", DJANGO_SETTINGS_MODULE=KILLSETTINGS)
    cluster = start_cluster(env, tmp_path / "cluster.log")
    killed: list[int] = []
    try:
        turns = [store(seats[i % 3]) for i in range(TURNS)]
        assert wait_for(a_pass_is_running, timeout=60), "no pass ever started"
        in_flight = Turn.objects.filter(reflected_at__isnull=True).count()
        for pid in worker_pids(tmp_path / "cluster.log"):
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        started = time.monotonic()
        with override_settings(Q_CLUSTER={"timeout": 20}, CREWLET_REFLECT_STALL_SECONDS=4):

            def drained() -> bool:
                sweep.run_sweep()
                return not Turn.objects.filter(reflected_at__isnull=True).exists()

            done = wait_for(drained, timeout=240)
        took = time.monotonic() - started
    finally:
        stop(cluster)
    log = (tmp_path / "cluster.log").read_text()[-3000:]
    assert killed and in_flight > 1, f"the kill did not land mid-run ({in_flight} in flight)"
    assert done, f"{Turn.objects.filter(reflected_at__isnull=True).count()} turn(s) never reflected; log:\n{log}"
    for turn in turns:
        assert Episode.objects.filter(seat=turn.seat, run_id=turn.run_id, kind=Episode.RAW).count() == 1, turn.run_id
    print(f"{TURNS} turns, {in_flight} unreflected at the kill, drained {took:.1f}s after it")
