"""Fleet-singleton duties: a background pass claims its ``Duty`` row per tick, under a lease.

The holder id names the process's own incarnation (``host:pid:uuid``), so a restarted process on
the same pid is a different holder. The claim is one conditional UPDATE — free, or its lease
expired — then read back; anything short of reading our own id back (a database error, a race
lost) is no claim: not knowing whether a peer holds the duty is exactly when running anyway
produces the double write. Release clears the lease and records what the pass did.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone
from pydantic_core import to_jsonable_python

from learning.models import Duty

log = logging.getLogger("learning.passes.duties")

INCARNATION = uuid.uuid4().hex[:12]
DEFAULT_LEASE = timedelta(seconds=int(settings.Q_CLUSTER["timeout"]) + 60)  # past the queue's own kill


def holder_id() -> str:
    """This process's incarnation: host, pid and a per-start uuid."""
    return f"{socket.gethostname()}:{os.getpid()}:{INCARNATION}"


@dataclass(frozen=True)
class Claim:
    name: str
    holder: str
    lease_until: datetime


def claim(name: str, *, lease: timedelta = DEFAULT_LEASE, now: datetime | None = None) -> Claim | None:
    """Take the duty for one tick, or None: held elsewhere, or the claim could not be confirmed."""
    now = now or timezone.now()
    me, until = holder_id(), now + lease
    try:
        _ensure_row(name)
        with transaction.atomic():
            taken = (
                Duty.objects.filter(name=name)
                .filter(Q(lease_until__isnull=True) | Q(lease_until__lte=now))
                .update(holder=me, lease_until=until, last_started_at=now)
            )
        if not taken:
            return None
        confirmed = Duty.objects.filter(name=name, holder=me).exists()
    except DatabaseError:
        log.warning("duty %s: claim could not be confirmed; not running", name, exc_info=True)
        return None
    if not confirmed:
        log.warning("duty %s: claim not read back; not running", name)
        return None
    return Claim(name=name, holder=me, lease_until=until)


def _ensure_row(name: str) -> None:
    if Duty.objects.filter(name=name).exists():
        return
    try:
        with transaction.atomic():
            Duty.objects.create(name=name)
    except IntegrityError:  # a peer created it first: the row is what we wanted
        pass


def release(held: Claim, *, result: dict | None = None, now: datetime | None = None) -> bool:
    """Give the duty back and record the pass's result; False when the lease was no longer ours."""
    try:
        with transaction.atomic():
            return bool(
                Duty.objects.filter(name=held.name, holder=held.holder).update(
                    holder="", lease_until=None, last_finished_at=now or timezone.now(), last_result=result or {}
                )
            )
    except DatabaseError:
        log.warning("duty %s: release failed; the lease runs out at %s", held.name, held.lease_until, exc_info=True)
        return False


@contextmanager
def held(name: str, *, lease: timedelta = DEFAULT_LEASE, now: datetime | None = None):
    """``with held(name) as claim:`` — claim is None when the duty is not ours this tick."""
    taken = claim(name, lease=lease, now=now)
    outcome: dict = {}
    try:
        yield taken, outcome
    finally:
        if taken is not None:
            release(taken, result=outcome)


def run_singleton(name: str, fn: Callable[[], dict], *, lease: timedelta = DEFAULT_LEASE) -> dict:
    """Run ``fn`` under the duty, or report that it did not run and why."""
    with held(name, lease=lease) as (taken, outcome):
        if taken is None:
            return {"ran": False, "why": f"duty {name} is held elsewhere or the claim could not be confirmed"}
        try:
            result = fn() or {}
        except Exception as exc:
            outcome.update({"error": f"{type(exc).__name__}: {exc}"})
            raise
        outcome.update(_jsonable(result))
        return {"ran": True, "holder": taken.holder, **result}


def _jsonable(result: dict) -> dict:
    return to_jsonable_python(result)
