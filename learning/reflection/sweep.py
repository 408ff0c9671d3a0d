"""The backlog sweep: every turn is reflected eventually, whatever happened to its task.

A turn's task can be lost (a failed enqueue, a worker ``kill -9``-ed mid-pass, a pass that timed out
waiting for its seat) or can leave the turn reflectable on purpose (``no_budget``: the ceiling may
move). Each tick re-enqueues the oldest unreflected turns that no task can still be working on: at
least ``grace_seconds`` old (a task's whole life: the queue's timeout plus a stall span) and not re-driven
within the same span, at most ``SWEEP_LIMIT`` a tick. A re-driven task that finds its turn already
reflected returns quietly, so a redelivery costs one row read.

A seat's stalled turns do not wait out that grace. When no pass runs for a seat (its lock is free; a
dead holder's went with its session) and it has turns unreflected for more than ``stall_seconds``,
they are re-driven at once in two cases. The queue passed them over: a turn the seat received after
them was reflected more than that span ago, so their tasks died (with a killed worker, or in a
killed cluster's memory) while the seat's later tasks ran; every such turn is re-driven. Or the seat
went quiet: none of its turns was reflected within the span (a worker killed mid-pass on the seat's
last turn); its oldest turn is re-driven, one task per seat per span.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db.models import Max, Min, Q
from django.utils import timezone

from learning.models import Turn
from learning.reflection.lock import seats_held

log = logging.getLogger("learning.reflection.sweep")

SWEEP_LIMIT = 200  # turns re-enqueued per tick (ticks are a minute apart)
STALL_SECONDS = 60  # a seat with no pass running and no turn reflected for this long is stalled


def stall_seconds() -> int:
    """``STALL_SECONDS``, or the settings' ``CREWLET_REFLECT_STALL_SECONDS`` (a process test shortens it)."""
    return int(getattr(settings, "CREWLET_REFLECT_STALL_SECONDS", STALL_SECONDS))


def grace_seconds() -> int:
    """How long a turn's own task may still be running: the queue's task timeout plus a stall span."""
    return int(settings.Q_CLUSTER["timeout"]) + stall_seconds()


def due(*, now=None, grace: float | None = None):
    """Unreflected turns old enough that no task of theirs can still be alive, oldest first."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=grace if grace is not None else grace_seconds())
    return (
        Turn.objects.filter(reflected_at__isnull=True, received_at__lt=cutoff)
        .filter(Q(redriven_at__isnull=True) | Q(redriven_at__lt=cutoff))
        .order_by("received_at", "id")
    )


def stalled(*, now=None, limit: int = SWEEP_LIMIT) -> list[tuple[int, int]]:
    """(turn id, seat id) of the stalled turns, oldest seat first (see the module's docstring)."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=stall_seconds())
    waiting = Turn.objects.filter(reflected_at__isnull=True, received_at__lt=cutoff).filter(
        Q(redriven_at__isnull=True) | Q(redriven_at__lt=cutoff)
    )
    oldest = dict(
        waiting.values("seat_id").annotate(oldest=Min("received_at")).order_by("oldest")
        .values_list("seat_id", "oldest")[:limit]
    )
    idle = [seat_id for seat_id in oldest if seat_id not in seats_held(oldest)]
    if not idle:
        return []
    progressed = set(
        Turn.objects.filter(seat_id__in=idle).values("seat_id").annotate(last=Max("reflected_at"))
        .filter(last__gte=cutoff).values_list("seat_id", flat=True)
    )
    passed_over = dict(  # per seat, the latest turn received among those reflected more than a span ago
        Turn.objects.filter(seat_id__in=idle, reflected_at__lt=cutoff).values("seat_id")
        .annotate(latest=Max("received_at")).values_list("seat_id", "latest")
    )
    picked: list[tuple[int, int]] = []
    for seat_id in idle:
        mine = waiting.filter(seat_id=seat_id).order_by("received_at", "id").values_list("id", "seat_id")
        if passed_over.get(seat_id) and passed_over[seat_id] > oldest[seat_id]:
            rows = list(mine.filter(received_at__lt=passed_over[seat_id])[: limit - len(picked)])  # every one passed over
        elif seat_id not in progressed:
            rows = list(mine[:1])  # a quiet seat: its oldest turn (its pass reflects the others)
        else:
            continue
        picked += rows
        if len(picked) >= limit:
            break
    return picked


def run_sweep(*, now=None, grace: float | None = None, limit: int = SWEEP_LIMIT) -> dict:
    """Re-enqueue up to ``limit`` due or stalled turns; returns how many, and how many more are due."""
    from learning.intake.turns import enqueue_reflection

    now = now or timezone.now()
    batch = stalled(now=now, limit=limit)
    taken = {turn_id for turn_id, _ in batch}
    batch += [row for row in due(now=now, grace=grace).exclude(pk__in=taken).values_list("id", "seat_id")[: limit - len(batch)]]
    for turn_id, seat_id in batch:
        # marked first: an enqueue that fails is retried by a later tick, never twice by this one
        Turn.objects.filter(pk=turn_id).update(redriven_at=now)
        enqueue_reflection(turn_id, seat_id)
    left = due(now=now, grace=grace).count()
    if batch:
        log.info("backlog sweep re-enqueued %d turn(s); %d more due", len(batch), left)
    return {"redriven": len(batch), "left": left}
