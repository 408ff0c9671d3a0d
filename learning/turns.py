"""Turn intake: store a ``turn_completed`` record whole, once per run id, and enqueue its reflection.

The turn is one loop keyed by its run id: what the run's prefetch offered and derived (the skill ids
in prompt order, the ask) was frozen with its prefix, so a record that omits them is completed from
there; what the runtime states explicitly wins.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from django.db import IntegrityError, transaction

from crewlet.errors import Conflict
from learning.models import PrefetchSnapshot, Turn
from learning.turn_record import TurnRecord

if TYPE_CHECKING:
    from crewlet.models import Seat

log = logging.getLogger("learning.turns")

REFLECT_TASK = "learning.tasks.reflect_turn"


def enqueues_in_transaction() -> bool:
    """True when the queue is the database's own table (django-q2's ORM broker on the default
    database, not synchronous): the task row is then written in the turn's transaction -- a
    transactional outbox -- so a turn rolled back enqueues nothing and a committed one is never
    without its task. Other brokers (Redis) are enqueued after the commit."""
    from django_q.conf import Conf

    return not Conf.SYNC and Conf.ORM == "default"


def enqueue_reflection(turn_id: int, seat_id: int) -> None:
    """One django-q2 task per new turn; a broker that cannot take it leaves the turn for the backlog."""
    from django_q.tasks import async_task

    try:
        async_task(REFLECT_TASK, turn_id, group=f"seat-{seat_id}")
    except Exception:
        log.exception("turn %s stored but its reflection could not be enqueued (the backlog sweep will)", turn_id)


def _enqueue_here(turn_id: int, seat_id: int) -> None:
    """The task row in the turn's own transaction (rolled back with it, committed with it), under a
    savepoint: an enqueue that fails leaves the turn stored for the backlog sweep to re-drive."""
    from django_q.tasks import async_task

    try:
        with transaction.atomic():
            async_task(REFLECT_TASK, turn_id, group=f"seat-{seat_id}")
    except Exception:
        log.exception("turn %s stored but its reflection could not be enqueued (the backlog sweep will)", turn_id)


def completed_from_prefetch(*, seat: Seat, record: TurnRecord) -> TurnRecord:
    """The record with what it omitted taken from the run's frozen prefetch (the runtime's own values win).

    A record that states both its ask and its offered skills needs nothing from the prefetch: the
    snapshot is not read.
    """
    if record.skills_offered is not None and record.ask.strip():
        return record
    snapshot = PrefetchSnapshot.objects.filter(run_id=record.run_id, seat=seat).only("rendered").first()
    rendered = snapshot.rendered if snapshot is not None else {}
    filled = {}
    if record.skills_offered is None:
        filled["skills_offered"] = [int(i) for i in rendered.get("skills_offered") or []]
    if not record.ask.strip() and rendered.get("ask"):
        filled["ask"] = rendered["ask"]
    return record.model_copy(update=filled) if filled else record


def store_turn(*, seat: Seat, record: TurnRecord) -> tuple[Turn, bool]:
    """Store the record; a run id the seat already stored with the same payload is answered with that
    turn and enqueues nothing (``Conflict`` naming the fields when the payload differs)."""
    record = completed_from_prefetch(seat=seat, record=record)
    try:
        with transaction.atomic():
            turn = Turn.objects.create(
                run_id=record.run_id,
                work_key=record.work_key,
                seat=seat,
                conversation_id=record.conversation_id,
                conversation_kind=record.conversation_kind,
                review_outcome=record.review_outcome,
                payload=record.model_dump(mode="json"),
            )
            if enqueues_in_transaction():
                _enqueue_here(turn.pk, seat.pk)
            else:
                transaction.on_commit(lambda: enqueue_reflection(turn.pk, seat.pk))
    except IntegrityError:
        existing = Turn.objects.filter(seat=seat, run_id=record.run_id).first()
        if existing is None:
            raise
        differ = differing_fields(record_of(existing), record)
        if differ:
            raise Conflict(
                f"run id {record.run_id!r} was already stored with another payload (differs in: {', '.join(differ)})",
                field="run_id", differing_fields=differ,
            ) from None
        return existing, False
    return turn, True


def differing_fields(stored: TurnRecord, repeat: TurnRecord) -> list[str]:
    """The record fields a repeat of a run id states differently from the stored turn, by name."""
    before, after = stored.model_dump(mode="json"), repeat.model_dump(mode="json")
    return sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))


def record_of(turn: Turn) -> TurnRecord:
    """A stored turn's record, typed (older rows keep loading)."""
    return TurnRecord.from_stored(turn.payload)
