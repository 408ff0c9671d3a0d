"""``reflect_turn``: the pass for one stored turn, under the seat's lock, at most once per turn."""

from __future__ import annotations

import logging

from django.utils import timezone

from learning.models import Turn
from learning.reflect import dispatcher
from learning.reflect.lock import LockTimeout, seat_lock

log = logging.getLogger("learning.reflect")


def reflect_turn(turn_id: int, *, now=None) -> dict:
    """Reflect one turn; a turn that is gone or already reflected returns quietly with a log line.

    The turn is re-read under the lock, so two deliveries of one task never both run its pass. A
    pass closed by ``no_budget`` leaves the turn unreflected: the ceiling may move.
    """
    turn = Turn.objects.select_related("seat", "seat__role", "seat__company", "seat__unit").filter(pk=turn_id).first()
    if turn is None:
        log.info("reflect_turn %s: the turn is gone", turn_id)
        return {"turn": turn_id, "status": "gone"}
    if turn.reflected_at is not None:
        log.info("reflect_turn %s: already reflected at %s", turn_id, turn.reflected_at)
        return {"turn": turn_id, "status": "already_reflected"}
    try:
        with seat_lock(turn.seat):
            if Turn.objects.filter(pk=turn_id, reflected_at__isnull=False).exists():
                return {"turn": turn_id, "status": "already_reflected"}
            result = dispatcher.reflect(turn, now=now)
            if not result.reflectable_again:
                Turn.objects.filter(pk=turn_id).update(reflected_at=timezone.now())
    except LockTimeout as exc:
        log.warning("reflect_turn %s left for the backlog: %s", turn_id, exc)
        return {"turn": turn_id, "status": "lock_timeout"}
    except Exception as exc:  # reflection is about a turn that is over: the task always completes
        log.exception("reflect_turn %s failed outside its workers; left for the backlog", turn_id)
        return {"turn": turn_id, "status": "error", "error": f"{type(exc).__name__}: {exc}"}
    return {"turn": turn_id, "status": "reflected", "gate": result.gate, "failed": result.failed}
