"""Turn intake: store a ``turn_completed`` record whole, once per run id, and enqueue its reflection."""

from __future__ import annotations

import logging

from django.db import IntegrityError, transaction

from crewlet.errors import Conflict
from learning.models import Turn

log = logging.getLogger("learning.turns")

REFLECT_TASK = "learning.tasks.reflect_turn"


def _enqueue(turn_id: int, seat_id: int) -> None:
    """One django-q2 task per new turn; a broker that cannot take it leaves the turn for the backlog."""
    from django_q.tasks import async_task

    try:
        async_task(REFLECT_TASK, turn_id, group=f"seat-{seat_id}")
    except Exception:
        log.exception("turn %s stored but its reflection could not be enqueued (reflect_backlog will)", turn_id)


def store_turn(*, seat, record: dict) -> tuple[Turn, bool]:
    """Store the record; a run id already stored is answered with that turn and enqueues nothing."""
    try:
        with transaction.atomic():
            turn = Turn.objects.create(
                run_id=record["run_id"],
                work_key=record.get("work_key") or "",
                seat=seat,
                conversation_id=record.get("conversation_id") or "",
                conversation_kind=record.get("conversation_kind") or "",
                review_outcome=record["review_outcome"],
                payload=record,
            )
            transaction.on_commit(lambda: _enqueue(turn.pk, seat.pk))
    except IntegrityError:
        existing = Turn.objects.filter(run_id=record["run_id"]).first()
        if existing is None:
            raise
        if existing.seat_id != seat.pk:
            raise Conflict(f"run id {record['run_id']!r} belongs to another seat's turn") from None
        return existing, False
    return turn, True
