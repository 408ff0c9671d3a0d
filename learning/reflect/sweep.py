"""The backlog sweep: every turn is reflected eventually, whatever happened to its task.

A turn's task can be lost (a failed enqueue, a worker ``kill -9``-ed mid-pass, a pass that timed out
waiting for its seat) or can leave the turn reflectable on purpose (``no_budget``: the ceiling may
move). Each tick re-enqueues the oldest unreflected turns that no task can still be working on: at
least ``grace_seconds`` old (a task's whole life: the queue's timeout plus a lease) and not re-driven
within the same span, at most ``SWEEP_LIMIT`` a tick. A re-driven task that finds its turn already
reflected returns quietly, so a redelivery costs one row read.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from learning.models import Turn
from learning.reflect.lock import lease_seconds

log = logging.getLogger("learning.reflect.sweep")

SWEEP_LIMIT = 200  # turns re-enqueued per tick (ticks are a minute apart)


def grace_seconds() -> int:
    """How long a turn's own task may still be running: the queue's task timeout plus a lease."""
    return int(settings.Q_CLUSTER["timeout"]) + lease_seconds()


def due(*, now=None, grace: float | None = None):
    """Unreflected turns old enough that no task of theirs can still be alive, oldest first."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=grace if grace is not None else grace_seconds())
    return (
        Turn.objects.filter(reflected_at__isnull=True, received_at__lt=cutoff)
        .filter(Q(redriven_at__isnull=True) | Q(redriven_at__lt=cutoff))
        .order_by("received_at", "id")
    )


def run_sweep(*, now=None, grace: float | None = None, limit: int = SWEEP_LIMIT) -> dict:
    """Re-enqueue up to ``limit`` due turns; returns how many, and how many more wait."""
    from learning.turns import enqueue_reflection

    now = now or timezone.now()
    batch = list(due(now=now, grace=grace).values_list("id", "seat_id")[:limit])
    for turn_id, seat_id in batch:
        # marked first: an enqueue that fails is retried by a later tick, never twice by this one
        Turn.objects.filter(pk=turn_id).update(redriven_at=now)
        enqueue_reflection(turn_id, seat_id)
    left = due(now=now, grace=grace).count()
    if batch:
        log.info("backlog sweep re-enqueued %d turn(s); %d more due", len(batch), left)
    return {"redriven": len(batch), "left": left}
