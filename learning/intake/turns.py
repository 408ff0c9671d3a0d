"""Turn intake: store a ``turn_completed`` record whole, once per run id, and enqueue its reflection.

The turn is one loop keyed by its run id: what the run's prefetch offered and derived (the skill ids
in prompt order, the ask) was frozen with its prefix, so a record that omits them is completed from
there; what the runtime states explicitly wins.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import TYPE_CHECKING

from django.db import IntegrityError, transaction

from crewlet.errors import Conflict
from learning.intake import prefetch_snapshots
from learning.intake.record import TurnRecord
from learning.models import Turn

if TYPE_CHECKING:
    from crewlet.models import Seat

log = logging.getLogger("learning.intake.turns")

REFLECT_TASK = "learning.reflection.tasks.reflect_turn"


def _task(turn_id: int, seat_id: int) -> None:
    from django_q.tasks import async_task

    async_task(REFLECT_TASK, turn_id, group=f"seat-{seat_id}")


def enqueue_reflection(turn_id: int, seat_id: int) -> None:
    """One django-q2 task for a committed turn; a broker that cannot take it leaves the turn for the
    backlog sweep (``learning.reflection.sweep``), which re-drives every unreflected turn."""
    try:
        _task(turn_id, seat_id)
    except Exception:
        log.exception("turn %s stored but its reflection could not be enqueued (the backlog sweep will)", turn_id)


def queue_in_database() -> bool:
    """Whether tasks wait in the database's own queue table (django-q2's ORM broker) for a worker,
    rather than in Redis or run inline (``sync``)."""
    from django_q.conf import Conf

    return bool(Conf.ORM) and not Conf.SYNC


class _Pending:
    """A validated record on its way to the store, with what its insert needs made by the request's thread."""

    __slots__ = ("seat", "record", "payload")

    def __init__(self, seat: Seat, record: TurnRecord):
        self.seat, self.record, self.payload = seat, record, record.model_dump(mode="json")

    def new_turn(self) -> Turn:
        r = self.record
        return Turn(run_id=r.run_id, work_key=r.work_key, seat=self.seat, conversation_id=r.conversation_id,
                    conversation_kind=r.conversation_kind, review_outcome=r.review_outcome, payload=self.payload)


def _store(one: _Pending) -> tuple[Turn, bool]:
    """The turn in its own transaction (a savepoint inside the caller's) and its task: the database's own
    queue takes the task in that transaction, so the two commit together or not at all; another broker
    takes it once the turn commits. A run id already stored is answered by ``_repeat``."""
    try:
        with transaction.atomic():
            turn = one.new_turn()
            turn.save(force_insert=True)
            if queue_in_database():
                _task(turn.pk, turn.seat_id)
            else:
                transaction.on_commit(partial(enqueue_reflection, turn.pk, turn.seat_id))
        return turn, True
    except IntegrityError as exc:
        return _repeat(one, exc)


def _repeat(one: _Pending, error: IntegrityError) -> tuple[Turn, bool]:
    """A run id the seat already stored: that turn when the payload is the same, else ``Conflict``."""
    existing = Turn.objects.filter(seat=one.seat, run_id=one.record.run_id).first()
    if existing is None:
        raise error
    differ = differing_fields(record_of(existing), one.record)
    if differ:
        raise Conflict(
            f"run id {one.record.run_id!r} was already stored with another payload (differs in: {', '.join(differ)})",
            field="run_id", differing_fields=differ,
        )
    return existing, False


def completed_from_prefetch(*, seat: Seat, record: TurnRecord) -> TurnRecord:
    """The record with what it omitted taken from the run's frozen prefetch (the runtime's own values win).

    A record that states both its ask and its offered skills needs nothing from the prefetch: the
    snapshot is not read.
    """
    if record.skills_offered is not None and record.ask.strip():
        return record
    rendered = prefetch_snapshots.stored(seat_id=seat.pk, run_id=record.run_id) or {}
    filled = {}
    if record.skills_offered is None:
        filled["skills_offered"] = [int(i) for i in rendered.get("skills_offered") or []]
    if not record.ask.strip() and rendered.get("ask"):
        filled["ask"] = rendered["ask"]
    return record.model_copy(update=filled) if filled else record


def store_turn(*, seat: Seat, record: TurnRecord) -> tuple[Turn, bool]:
    """Store the record, scrubbed of secrets, and its reflection task; ``(turn, True)`` once committed. A run id the seat
    already stored with the same payload is answered with that turn and enqueues nothing (``Conflict``
    naming the fields when the payload differs).
    """
    pending = _Pending(seat, completed_from_prefetch(seat=seat, record=record.scrubbed()))
    return _store(pending)


def differing_fields(stored: TurnRecord, repeat: TurnRecord) -> list[str]:
    """The record fields a repeat of a run id states differently from the stored turn, by name."""
    before, after = stored.model_dump(mode="json"), repeat.model_dump(mode="json")
    return sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))


def record_of(turn: Turn) -> TurnRecord:
    """A stored turn's record, typed: the payload intake stored, read by the same schema."""
    return TurnRecord.model_validate(turn.payload)
