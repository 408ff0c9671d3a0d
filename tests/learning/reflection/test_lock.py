"""The per-seat lock: one pass per seat at a time; different seats never wait on each other; a
holder that dies never keeps its seat."""

import os
import select
import signal
import subprocess
import sys
import threading
import time

import pytest
from django.db import connection, connections

from learning.reflection import lock
from tests.learning.passes.test_qcluster import ROOT, _env

BOUND = 30.0  # seconds a claimant waits below


def _in_thread(target):
    def run():
        try:
            target()
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.mark.django_db(transaction=True)
def test_one_seat_waits_while_another_seat_goes_straight_in(seat, other_seat):
    held, release = threading.Event(), threading.Event()
    outcome = {}

    def holder():
        with lock.seat_lock(seat):
            held.set()
            release.wait(10)

    def other_seat_pass():
        started = time.monotonic()
        with lock.seat_lock(other_seat, wait=5):
            outcome["other"] = time.monotonic() - started

    def same_seat_pass():
        try:
            with lock.seat_lock(seat, wait=0.3):
                outcome["same"] = "acquired"
        except lock.LockTimeout:
            outcome["same"] = "timed out"

    first = _in_thread(holder)
    assert held.wait(5)
    assert lock.seats_held([seat.pk, other_seat.pk]) == {seat.pk}
    threads = [_in_thread(other_seat_pass), _in_thread(same_seat_pass)]
    for t in threads:
        t.join(10)
    assert outcome["same"] == "timed out"
    assert outcome["other"] < 1.0
    release.set()
    first.join(10)
    after = _in_thread(same_seat_pass)
    after.join(10)
    assert outcome["same"] == "acquired"
    assert lock.seats_held([seat.pk, other_seat.pk]) == set()


@pytest.mark.django_db(transaction=True)
def test_a_lock_is_released_when_the_pass_raises(seat):
    with pytest.raises(RuntimeError), lock.seat_lock(seat):
        raise RuntimeError("worker bug")
    with lock.seat_lock(seat, wait=0.2):
        pass


@pytest.mark.django_db(transaction=True)
def test_the_lock_holds_no_transaction_open_while_the_pass_runs(seat):
    with lock.seat_lock(seat):
        assert connection.get_autocommit() and not connection.in_atomic_block
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted")
            assert cursor.fetchone()[0] == 1
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'")
        assert cursor.fetchone()[0] == 0


def test_the_wait_is_shorter_than_the_queues_task_timeout(settings):
    timeout = settings.Q_CLUSTER["timeout"]
    assert lock.WAIT_SECONDS < timeout
    assert settings.Q_CLUSTER["retry"] > timeout  # a task is not redelivered while it may still run


HOLD = """
import time
from learning.reflection import lock
from crewlet.models import Seat
with lock.seat_lock(Seat.objects.get(pk={pk})):
    print("held", flush=True)
    time.sleep(600)
"""


def _holding_process(seat) -> subprocess.Popen:
    """Another process holding the seat's lock, once it says so."""
    proc = subprocess.Popen([sys.executable, "manage.py", "shell", "-c", HOLD.format(pk=seat.pk)], cwd=ROOT,
                            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline, lines = time.monotonic() + 60, []
    while time.monotonic() < deadline and select.select([proc.stdout], [], [], deadline - time.monotonic())[0]:
        lines.append(proc.stdout.readline())
        if lines[-1] in ("held\n", ""):
            break
    if not lines or lines[-1] != "held\n":
        proc.kill()
        raise AssertionError(f"the holder never held the lock: {lines} {proc.communicate(timeout=10)[1][-2000:]}")
    return proc


@pytest.mark.django_db(transaction=True)
def test_a_holder_killed_mid_pass_frees_its_seat(seat):
    holder = _holding_process(seat)
    try:
        with pytest.raises(lock.LockTimeout), lock.seat_lock(seat, wait=0.5):
            pass  # held by a live process: nobody else gets in
        assert lock.seats_held([seat.pk]) == {seat.pk}
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=BOUND)
        with lock.seat_lock(seat, wait=BOUND):
            taken = True
    finally:
        holder.kill()
        holder.communicate(timeout=BOUND)
    assert taken


@pytest.mark.django_db(transaction=True)
def test_exactly_one_of_several_claimants_holds_the_seat_at_a_time(seat):
    start, inside, most = threading.Barrier(4), [0], [0]
    guard = threading.Lock()

    def claimant():
        start.wait(10)
        with lock.seat_lock(seat, wait=BOUND):
            with guard:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            time.sleep(0.2)
            with guard:
                inside[0] -= 1

    threads = [_in_thread(claimant) for _ in range(4)]
    for t in threads:
        t.join(BOUND)
    assert most[0] == 1 and inside[0] == 0
