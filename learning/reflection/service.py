"""``reflect_turn``: the pass for one stored turn, under the seat's lock, at most once per turn.

Under the one lock the task also drains the seat's other unreflected turns, oldest first, its own
among them (at most ``DRAIN_TURNS`` turns or ``DRAIN_SECONDS``): a turn whose own task was lost
(a worker killed mid-pass, a failed enqueue) is taken by the seat's next task instead of waiting
for the backlog sweep, and a queue of one seat's turns pays for its lock once and for one flush
to disk (``durability.deferred``: each pass still commits alone). A task whose turn was already
drained returns after one row read.
"""

from __future__ import annotations

import logging
import time
from contextlib import nullcontext

from django.db.models import Case, Q, Value, When

from crewlet.models import Seat
from learning.models import Turn
from learning.reflection import dispatcher, durability
from learning.reflection.lock import LockTimeout, seat_lock

log = logging.getLogger("learning.reflection")

DRAIN_TURNS = 20  # turns one task reflects under one lock, its own included
DRAIN_SECONDS = 20.0  # no further turn is started past this; the rest wait for their own tasks
SEAT_ROWS = ("role", "role__company", "company", "unit")  # what a pass reads of its seat, besides the seat


def _queue(turn_id: int, seat_id: int, *, drain: bool) -> list[Turn]:
    """The turns to reflect under this lock, oldest first: ``turn_id`` always among them, and with
    ``drain`` the seat's oldest other unreflected turns; then their seat's rows, read once for them
    all (each turn's pass reads the one seat instance). Each row is as it is under the lock (the
    caller skips one already reflected)."""
    if drain:  # the turn ranked first, so the limit never leaves it out
        turns = list(Turn.objects.filter(Q(pk=turn_id) | Q(seat_id=seat_id, reflected_at__isnull=True)).order_by(
            Case(When(pk=turn_id, then=Value(0)), default=Value(1)), "received_at", "id")[:DRAIN_TURNS])
    else:
        turns = list(Turn.objects.filter(pk=turn_id))
    if not turns:
        return []
    seats = Seat.objects.select_related(*SEAT_ROWS).in_bulk({turn.seat_id for turn in turns})  # one, but for a moved turn
    turns = [turn for turn in turns if turn.seat_id in seats]  # a seat deleted meanwhile took its turns with it
    for turn in turns:
        turn.seat = seats[turn.seat_id]
    return sorted(turns, key=lambda turn: (turn.received_at, turn.pk))


def _reflect_one(turn: Turn, *, now=None) -> dict:
    """One pass; a pass that raised outside its workers is reported, never raised (the task completes)."""
    try:
        result = dispatcher.reflect(turn, now=now)
    except Exception as exc:  # reflection is about a turn that is over: the task always completes
        log.exception("reflect_turn %s failed outside its workers; left for the backlog", turn.pk)
        return {"turn": turn.pk, "status": "error", "error": f"{type(exc).__name__}: {exc}"}
    if not result.committed:
        return {"turn": turn.pk, "status": "error", "error": "the pass could not commit", "gate": result.gate}
    return {"turn": turn.pk, "status": "reflected", "gate": result.gate, "failed": result.failed}


def reflect_turn(turn_id: int, *, now=None, drain: bool = True) -> dict:
    """Reflect one turn (and, ``drain``, the seat's other waiting turns); returns this turn's outcome.

    A turn that is gone or already reflected returns quietly with a log line. Each turn is re-read
    under the lock, so two deliveries of one task never both run its pass. A pass closed by
    ``no_budget`` leaves the turn unreflected (the ceiling may move) and ends the drain.
    """
    row = Turn.objects.filter(pk=turn_id).values_list("seat_id", "reflected_at").first()
    if row is None:
        log.info("reflect_turn %s: the turn is gone", turn_id)
        return {"turn": turn_id, "status": "gone"}
    seat_id, reflected_at = row
    if reflected_at is not None:  # a redelivery, or a turn an earlier task drained: this one row read
        log.info("reflect_turn %s: already reflected at %s", turn_id, reflected_at)
        return {"turn": turn_id, "status": "already_reflected"}
    mine = {"turn": turn_id, "status": "already_reflected"}
    try:
        with seat_lock(Seat(pk=seat_id)):
            deadline, others = time.monotonic() + DRAIN_SECONDS, True
            queue = [t for t in _queue(turn_id, seat_id, drain=drain) if t.reflected_at is None]  # re-read under the lock
            with durability.deferred(turn_id) if len(queue) > 1 else nullcontext():
                for queued in queue:
                    if queued.pk != turn_id and not others:
                        continue
                    outcome = _reflect_one(queued, now=now)
                    if queued.pk == turn_id:
                        mine = outcome
                    # no budget for one turn is none for the next; past the drain's time the rest wait for their tasks
                    others = others and outcome.get("gate") not in dispatcher.TRANSIENT_GATES and time.monotonic() < deadline
    except LockTimeout as exc:
        log.warning("reflect_turn %s left for the backlog: %s", turn_id, exc)
        return {"turn": turn_id, "status": "lock_timeout"}
    except Exception as exc:  # the lock or the queue's read failed: the task still completes
        log.exception("reflect_turn %s failed outside its workers; left for the backlog", turn_id)
        return {"turn": turn_id, "status": "error", "error": f"{type(exc).__name__}: {exc}"}
    return mine
