"""The per-seat lock: one pass per seat at a time; different seats never wait on each other."""

import threading
import time
from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

from learning.models import SeatReflectionLock
from learning.reflect import lock


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
