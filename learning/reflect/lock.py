"""The per-seat reflection lock: passes for one seat never overlap; passes for different seats do.

PostgreSQL takes a session advisory lock keyed by the seat (released by the database if the
process dies). SQLite has no advisory locks, and a transaction held across a pass would take the
whole file's write lock, serialising every seat behind one model call; so there the lock is a
lease row per seat, claimed by a conditional UPDATE, renewed every ``RENEW_SECONDS`` by a heartbeat
thread while the pass runs, and expiring ``LEASE_SECONDS`` after its holder stops renewing (a
``kill -9``). Neither holds a transaction open while the pass runs.

A lease is also tied to its holder's liveness: the holder string records the host (its name and
pid namespace) and the pid that claimed it, so a claimant that finds the lease held by a process of its own host that no longer
exists takes it over at once (one conditional UPDATE on that exact holder: one claimant wins). A
live pid, or a holder on another host (whose processes this one cannot see), keeps the lease until
it expires. PostgreSQL needs no such rule: the server ends a dead client's session, and its
advisory locks with it.

The numbers follow the queue's (``Q_CLUSTER`` in crewlet/settings.py: a task is killed at 300 s):
the lease is far shorter than the task timeout, so a dead holder's seat is free again within a
minute, and a pass waits for its seat at most ``WAIT_SECONDS``, well inside the timeout, before it
gives up and leaves the turn to the backlog sweep (``learning.reflect.sweep``).
"""

from __future__ import annotations

import functools
import logging
import os
import socket
import threading
import time
import uuid
from contextlib import contextmanager
from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import IntegrityError, connection
from django.db.models import Q
from django.utils import timezone

if TYPE_CHECKING:
    from crewlet.models import Seat

log = logging.getLogger("learning.reflect.lock")

LEASE_SECONDS = 60  # a dead holder's seat is free again after this; a live one renews it
RENEW_SECONDS = 15  # the heartbeat's period: several renewals fit in one lease
WAIT_SECONDS = 120.0  # shorter than the queue's task timeout (300 s): a waiting task returns, not killed


def lease_seconds() -> int:
    """``LEASE_SECONDS``, or the settings' ``CREWLET_REFLECT_LEASE_SECONDS`` (a process test shortens it)."""
    return int(getattr(settings, "CREWLET_REFLECT_LEASE_SECONDS", LEASE_SECONDS))


def renew_seconds() -> float:
    return float(getattr(settings, "CREWLET_REFLECT_RENEW_SECONDS", RENEW_SECONDS))


def wait_seconds() -> float:
    return float(getattr(settings, "CREWLET_REFLECT_WAIT_SECONDS", WAIT_SECONDS))
POLL_SECONDS = 0.02
ADVISORY_NAMESPACE = 0x5EF1EC7  # "reflect": keeps these keys apart from any other advisory lock


class LockTimeout(RuntimeError):
    """The seat's lock could not be had within the wait."""


@functools.cache
def this_host() -> str:
    """The host name and the pid namespace: two containers sharing a host name never judge each other's pids."""
    try:
        namespace = "".join(ch for ch in os.readlink("/proc/self/ns/pid") if ch.isdigit())
    except OSError:
        namespace = ""
    return f"{socket.gethostname()}/{namespace}" if namespace else socket.gethostname()


def _holder() -> str:
    return f"{this_host()}:{os.getpid()}:{threading.get_ident()}:{uuid.uuid4().hex[:8]}"


def holder_is_gone(holder: str) -> bool:
    """True when ``holder`` (``host:pid:thread:nonce``) ran on this host and its process no longer exists."""
    parts = holder.rsplit(":", 3)
    if len(parts) != 4 or parts[0] != this_host() or not parts[1].isdigit():
        return False  # another host's, or not ours to judge: it keeps the lease until it expires
    return process_gone(int(parts[1]))


def process_gone(pid: int) -> bool:
    """True when no process ``pid`` runs here (a zombie, killed but not yet reaped, counts as gone)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # another user's live process
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False  # no /proc: the signal said it exists


@contextmanager
def seat_lock(seat: Seat, *, wait: float | None = None):
    """Hold the seat's reflection lock for the block; raise ``LockTimeout`` past ``wait`` seconds."""
    wait = wait_seconds() if wait is None else wait
    if connection.vendor == "postgresql":
        with _advisory(seat.pk, wait):
            yield
    else:
        with _lease(seat.pk, wait):
            yield


def seats_held(seat_ids) -> set[int]:
    """Those of ``seat_ids`` whose reflection lock a live holder has now (a pass is running for them).

    PostgreSQL: the granted advisory locks of this namespace (a dead client's are gone with its
    session). SQLite: leases not expired whose holder is not a process gone from this host.
    """
    ids = {int(pk) for pk in seat_ids}
    if not ids:
        return set()
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT objid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND classid = %s",
                [ADVISORY_NAMESPACE],
            )
            return {int(row[0]) for row in cursor.fetchall()} & ids
    from learning.models import SeatReflectionLock

    leases = SeatReflectionLock.objects.filter(seat_id__in=ids, lease_until__gte=timezone.now()).exclude(holder="")
    return {seat_id for seat_id, holder in leases.values_list("seat_id", "holder") if not holder_is_gone(holder)}


def _advisory_key(seat_pk: int) -> int:
    return (ADVISORY_NAMESPACE << 32) | (int(seat_pk) & 0xFFFFFFFF)


@contextmanager
def _advisory(seat_pk: int, wait: float):
    key = _advisory_key(seat_pk)
    deadline = time.monotonic() + wait
    with connection.cursor() as cursor:
        while True:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", [key])
            if cursor.fetchone()[0]:
                break
            if time.monotonic() > deadline:
                raise LockTimeout(f"seat {seat_pk}: reflection lock not acquired within {wait:.0f}s")
            time.sleep(POLL_SECONDS)
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [key])


@contextmanager
def _lease(seat_pk: int, wait: float):
    from learning.models import SeatReflectionLock

    me = _holder()
    try:
        SeatReflectionLock.objects.get_or_create(seat_id=seat_pk)
    except IntegrityError:
        pass  # another worker created it first
    deadline = time.monotonic() + wait
    while True:
        now = timezone.now()
        claimed = (
            SeatReflectionLock.objects.filter(seat_id=seat_pk)
            .filter(Q(holder="") | Q(lease_until__lt=now))
            .update(holder=me, lease_until=now + timedelta(seconds=lease_seconds()))
        )
        if claimed or _take_over_from_the_dead(seat_pk, me):
            break
        if time.monotonic() > deadline:
            raise LockTimeout(f"seat {seat_pk}: reflection lock not acquired within {wait:.0f}s")
        time.sleep(POLL_SECONDS)
    stop = threading.Event()
    heartbeat = threading.Thread(target=_renew, args=(seat_pk, me, stop), name=f"lease-{seat_pk}", daemon=True)
    heartbeat.start()
    try:
        yield
    finally:
        stop.set()
        heartbeat.join(timeout=renew_seconds())
        SeatReflectionLock.objects.filter(seat_id=seat_pk, holder=me).update(holder="", lease_until=None)


def _take_over_from_the_dead(seat_pk: int, me: str) -> bool:
    """Claim a lease whose holder's process is gone from this host; only the claimant whose UPDATE
    still finds that exact holder wins."""
    from learning.models import SeatReflectionLock

    holder = SeatReflectionLock.objects.filter(seat_id=seat_pk).values_list("holder", flat=True).first()
    if not holder or not holder_is_gone(holder):
        return False
    taken = SeatReflectionLock.objects.filter(seat_id=seat_pk, holder=holder).update(
        holder=me, lease_until=timezone.now() + timedelta(seconds=lease_seconds())
    )
    if taken:
        log.warning("seat %s: took over the lease of %s, whose process is gone", seat_pk, holder)
    return bool(taken)


def _renew(seat_pk: int, me: str, stop: threading.Event, every: float | None = None) -> None:
    """Push the lease forward while the pass runs; a lease lost (the holder stalled past it) is logged."""
    from django.db import connections

    from learning.models import SeatReflectionLock

    try:
        while not stop.wait(every or renew_seconds()):
            try:
                renewed = SeatReflectionLock.objects.filter(seat_id=seat_pk, holder=me).update(
                    lease_until=timezone.now() + timedelta(seconds=lease_seconds())
                )
            except Exception:  # a busy database: the next beat tries again, the lease still has time
                log.warning("seat %s: lease renewal failed", seat_pk, exc_info=True)
                continue
            if not renewed:
                log.error("seat %s: lease lost by %s (stalled past %ss)", seat_pk, me, lease_seconds())
                return
    finally:
        connections.close_all()  # this thread's own connection
