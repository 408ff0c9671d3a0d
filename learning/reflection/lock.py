"""The per-seat reflection lock: passes for one seat never overlap; passes for different seats do.

A session advisory lock keyed by the seat (``pg_try_advisory_lock``), taken on the pass's own
connection and polled until it is free or the wait is over. No transaction stays open while the
pass runs (each pass commits on its own), and a holder that dies never blocks the seat: the server
ends a dead client's session and its advisory locks with it.

A pass waits for its seat at most ``WAIT_SECONDS``, well inside the queue's task timeout
(``Q_CLUSTER`` in crewlet/settings.py: 300 s), before it gives up and leaves the turn to the
backlog sweep (``learning.reflection.sweep``).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import connection

if TYPE_CHECKING:
    from crewlet.models import Seat

WAIT_SECONDS = 120.0  # shorter than the queue's task timeout (300 s): a waiting task returns, not killed
POLL_SECONDS = 0.02
ADVISORY_NAMESPACE = 0x5EF1EC7  # "reflect": keeps these keys apart from any other advisory lock


class LockTimeout(RuntimeError):
    """The seat's lock could not be had within the wait."""


def wait_seconds() -> float:
    """``WAIT_SECONDS``, or the settings' ``CREWLET_REFLECT_WAIT_SECONDS`` (a process test shortens it)."""
    return float(getattr(settings, "CREWLET_REFLECT_WAIT_SECONDS", WAIT_SECONDS))


def _key(seat_pk: int) -> int:
    """One bigint key: the namespace in the high half, the seat in the low half (``pg_locks`` shows
    them as ``classid`` and ``objid``)."""
    return (ADVISORY_NAMESPACE << 32) | (int(seat_pk) & 0xFFFFFFFF)


@contextmanager
def seat_lock(seat: Seat, *, wait: float | None = None):
    """Hold the seat's reflection lock for the block; raise ``LockTimeout`` past ``wait`` seconds."""
    wait = wait_seconds() if wait is None else wait
    key = _key(seat.pk)
    deadline = time.monotonic() + wait
    with connection.cursor() as cursor:
        while True:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", [key])
            if cursor.fetchone()[0]:
                break
            if time.monotonic() > deadline:
                raise LockTimeout(f"seat {seat.pk}: reflection lock not acquired within {wait:.0f}s")
            time.sleep(POLL_SECONDS)
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [key])


def seats_held(seat_ids) -> set[int]:
    """Those of ``seat_ids`` whose reflection lock is held now (a pass is running for them): the granted
    advisory locks of this namespace, a dead client's gone with its session."""
    ids = {int(pk) for pk in seat_ids}
    if not ids:
        return set()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT objid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND classid = %s",
            [ADVISORY_NAMESPACE],
        )
        return {int(row[0]) for row in cursor.fetchall()} & ids
