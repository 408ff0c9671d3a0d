"""The per-seat reflection lock: passes for one seat never overlap; passes for different seats do.

PostgreSQL takes a session advisory lock keyed by the seat (released by the database if the
process dies). SQLite has no advisory locks, and a transaction held across a pass would take the
whole file's write lock, serialising every seat behind one model call; so there the lock is a
lease row per seat, claimed by a conditional UPDATE and expiring after ``LEASE_SECONDS`` should its
holder die. Neither holds a transaction open while the pass runs.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from contextlib import contextmanager
from datetime import timedelta

from django.db import IntegrityError, connection
from django.db.models import Q
from django.utils import timezone

LEASE_SECONDS = 600  # past the queue's task timeout (300 s): a live pass never outlives its lease
WAIT_SECONDS = 600.0
POLL_SECONDS = 0.02
ADVISORY_NAMESPACE = 0x5EF1EC7  # "reflect": keeps these keys apart from any other advisory lock


class LockTimeout(RuntimeError):
    """The seat's lock could not be had within the wait."""


def _holder() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}:{uuid.uuid4().hex[:8]}"


@contextmanager
def seat_lock(seat, *, wait: float = WAIT_SECONDS):
    """Hold the seat's reflection lock for the block; raise ``LockTimeout`` past ``wait`` seconds."""
    if connection.vendor == "postgresql":
        with _advisory(seat.pk, wait):
            yield
    else:
        with _lease(seat.pk, wait):
            yield


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
            .update(holder=me, lease_until=now + timedelta(seconds=LEASE_SECONDS))
        )
        if claimed:
            break
        if time.monotonic() > deadline:
            raise LockTimeout(f"seat {seat_pk}: reflection lock not acquired within {wait:.0f}s")
        time.sleep(POLL_SECONDS)
    try:
        yield
    finally:
        SeatReflectionLock.objects.filter(seat_id=seat_pk, holder=me).update(holder="", lease_until=None)
