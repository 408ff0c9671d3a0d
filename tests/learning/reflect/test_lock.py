"""The per-seat lock: one pass per seat at a time; different seats never wait on each other."""

import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

from learning.models import SeatReflectionLock
from learning.reflect import lock
from tests.learning.passes.test_qcluster import ROOT, _env

BOUND = 30.0  # seconds a claimant waits below; the dead holders' leases run for an hour


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


@pytest.mark.django_db(transaction=True)
def test_a_lock_is_released_when_the_pass_raises(seat):
    with pytest.raises(RuntimeError), lock.seat_lock(seat):
        raise RuntimeError("worker bug")
    with lock.seat_lock(seat, wait=0.2):
        pass


def test_a_dead_holders_lease_is_taken_over_once_it_expires(seat):
    SeatReflectionLock.objects.create(seat=seat, holder="gone-host:1:1", lease_until=timezone.now() - timedelta(seconds=1))
    with lock._lease(seat.pk, 0.5):
        assert SeatReflectionLock.objects.get(seat=seat).holder != "gone-host:1:1"
    assert SeatReflectionLock.objects.get(seat=seat).holder == ""


def test_a_live_lease_is_not_taken_over(seat):
    SeatReflectionLock.objects.create(seat=seat, holder="busy:1:1", lease_until=timezone.now() + timedelta(seconds=60))
    with pytest.raises(lock.LockTimeout), lock._lease(seat.pk, 0.1):
        pass


@pytest.mark.django_db(transaction=True)
def test_postgresql_uses_a_session_advisory_lock(seat, require_postgres):
    from django.db import connection

    with lock.seat_lock(seat):
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted")
            assert cursor.fetchone()[0] == 1
        assert not SeatReflectionLock.objects.exists()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'")
        assert cursor.fetchone()[0] == 0


@pytest.mark.django_db(transaction=True)
def test_a_running_pass_renews_its_lease_so_it_never_expires_under_it(seat):
    SeatReflectionLock.objects.create(seat=seat, holder="me", lease_until=timezone.now() + timedelta(seconds=1))
    first = SeatReflectionLock.objects.get(seat=seat).lease_until
    stop = threading.Event()
    beat = _in_thread(lambda: lock._renew(seat.pk, "me", stop, every=0.05))
    deadline = time.monotonic() + 10
    while SeatReflectionLock.objects.get(seat=seat).lease_until <= first and time.monotonic() < deadline:
        time.sleep(0.05)
    stop.set()
    beat.join(5)
    renewed = SeatReflectionLock.objects.get(seat=seat).lease_until
    assert renewed - first >= timedelta(seconds=lock.LEASE_SECONDS - 5)


def test_the_lease_and_the_wait_are_shorter_than_the_queues_task_timeout(settings):
    timeout = settings.Q_CLUSTER["timeout"]
    assert lock.LEASE_SECONDS < timeout and lock.WAIT_SECONDS < timeout
    assert lock.RENEW_SECONDS * 3 <= lock.LEASE_SECONDS
    assert settings.Q_CLUSTER["retry"] > timeout  # a task is not redelivered while it may still run


HOLD = """
import time
from django.test import override_settings
from learning.reflect import lock
from crewlet.models import Seat
with override_settings(CREWLET_REFLECT_LEASE_SECONDS=3600):
    with lock.seat_lock(Seat.objects.get(pk={pk})):
        print("held", flush=True)
        time.sleep(600)
"""


def _holding_process(seat) -> subprocess.Popen:
    """Another process of this host holding the seat's lock (an hour's lease), once it says so."""
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


def _a_dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


@pytest.mark.django_db(transaction=True)
def test_a_lease_whose_holder_died_on_this_host_is_taken_over_before_it_expires(seat):
    holder = _holding_process(seat)
    try:
        with pytest.raises(lock.LockTimeout), lock.seat_lock(seat, wait=0.5):
            pass  # held by a live process: nobody else gets in
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=BOUND)
        with lock.seat_lock(seat, wait=BOUND):  # an hour before the lease would expire
            taken = True
    finally:
        holder.kill()
        holder.communicate(timeout=BOUND)
    assert taken


@pytest.mark.django_db(transaction=True)
def test_exactly_one_claimant_takes_over_a_dead_holders_lease(seat):
    dead = f"{lock.this_host()}:{_a_dead_pid()}:1:cafe"
    SeatReflectionLock.objects.create(seat=seat, holder=dead, lease_until=timezone.now() + timedelta(hours=1))
    start, inside, outcome = threading.Barrier(4), threading.Event(), []

    def claimant():
        start.wait(10)
        try:
            with lock._lease(seat.pk, 1.0):
                outcome.append("took over")
                inside.set()
                time.sleep(1.5)  # held past every other claimant's wait
        except lock.LockTimeout:
            outcome.append("timed out")

    threads = [_in_thread(claimant) for _ in range(4)]
    for t in threads:
        t.join(20)
    assert sorted(outcome) == ["timed out"] * 3 + ["took over"]
    assert SeatReflectionLock.objects.get(seat=seat).holder == ""


@pytest.mark.parametrize("whose", ["a live process of this host", "a process of another host",
                                   "a process of another pid namespace under this host name"])
def test_a_lease_held_by_a_live_or_unseen_process_is_kept_until_it_expires(seat, whose):
    host, pid = {
        "a live process of this host": (lock.this_host(), os.getppid()),
        "a process of another host": ("another-host", _a_dead_pid()),
        "a process of another pid namespace under this host name": (f"{socket.gethostname()}/1", _a_dead_pid()),
    }[whose]
    holder = f"{host}:{pid}:1:beef"
    SeatReflectionLock.objects.create(seat=seat, holder=holder, lease_until=timezone.now() + timedelta(hours=1))
    with pytest.raises(lock.LockTimeout), lock._lease(seat.pk, 0.2):
        pass
    assert SeatReflectionLock.objects.get(seat=seat).holder == holder
