"""Turn intake: store a ``turn_completed`` record whole, once per run id, and enqueue its reflection.

The turn is one loop keyed by its run id: what the run's prefetch offered and derived (the skill ids
in prompt order, the ask) was frozen with its prefix, so a record that omits them is completed from
there; what the runtime states explicitly wins.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import TYPE_CHECKING

from django.db import DatabaseError, IntegrityError, transaction
from django.utils import timezone
from django_q.brokers import Broker
from django_q.conf import Conf

from crewlet.errors import Conflict
from learning import frozen_prefix, turn_rows
from learning.group_commit import GroupCommit
from learning.models import Turn
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
    return not Conf.SYNC and Conf.ORM == "default"


def enqueue_reflection(turn_id: int, seat_id: int) -> None:
    """One django-q2 task per new turn; a broker that cannot take it leaves the turn for the backlog."""
    from django_q.tasks import async_task

    try:
        async_task(REFLECT_TASK, turn_id, group=f"seat-{seat_id}")
    except Exception:
        log.exception("turn %s stored but its reflection could not be enqueued (the backlog sweep will)", turn_id)


class _Outbox(Broker):
    """Takes the packages django-q2's ``async_task`` builds for the ORM broker's table and keeps them, to be
    written as one INSERT beside the turns they reflect (the table's own broker writes a row per call)."""

    def __init__(self):
        super().__init__(Conf.CLUSTER_NAME)
        self.packages: list[str] = []

    @staticmethod
    def get_connection(list_key: str | None = None):
        return None  # no connection of its own: the rows are written in the turns' transaction

    def enqueue(self, task):
        self.packages.append(task)


class _OutboxFailed(Exception):
    pass


def _write_tasks(stored: list[Turn]) -> None:
    """The reflection task of each stored turn, as django-q2's ORM broker's rows, in one INSERT; a task
    that cannot be built is logged and left to the backlog sweep (its turn stays stored)."""
    from django_q.tasks import async_task

    outbox = _Outbox()
    for turn in stored:
        try:
            async_task(REFLECT_TASK, turn.pk, group=f"seat-{turn.seat_id}", broker=outbox)
        except Exception:
            log.exception("turn %s stored but its reflection could not be enqueued (the backlog sweep will)", turn.pk)
    if outbox.packages:
        try:
            turn_rows.insert_tasks(outbox.list_key, outbox.packages, timezone.now())
        except DatabaseError as exc:
            raise _OutboxFailed from exc


class _Pending:
    """A validated record on its way to the store, with what its insert needs made by the request's thread."""

    __slots__ = ("seat", "record", "payload")

    def __init__(self, seat: Seat, record: TurnRecord):
        self.seat, self.record, self.payload = seat, record, record.model_dump(mode="json")

    def new_turn(self) -> Turn:
        r = self.record
        return Turn(run_id=r.run_id, work_key=r.work_key, seat=self.seat, conversation_id=r.conversation_id,
                    conversation_kind=r.conversation_kind, review_outcome=r.review_outcome, payload=self.payload)


Outcome = tuple[Turn, bool] | BaseException


def _store(batch: list[_Pending]) -> list[Outcome]:
    """Every turn of ``batch`` and its task in ONE transaction (the task rows with the turns: rolled back
    with them, committed with them). A run id already stored fails the batch's insert: each turn is then
    stored alone, so one repeat answers as a repeat and the others are stored."""
    try:
        return list(_insert(batch, tasks=True))
    except _OutboxFailed:
        log.exception("%d turn(s) stored but their reflection could not be enqueued (the backlog sweep will)", len(batch))
        return list(_insert(batch, tasks=False))
    except IntegrityError as exc:
        if len(batch) > 1:
            return [outcome for one in batch for outcome in _store_alone(one)]
        return [_repeat(batch[0], exc)]


def _store_alone(one: _Pending) -> list[Outcome]:
    try:
        return _store([one])
    except Exception as exc:
        return [exc]


def _insert(batch: list[_Pending], *, tasks: bool) -> list[tuple[Turn, bool]]:
    """The turns in one INSERT and, with ``tasks``, their tasks: in the same transaction (the ORM broker's
    table), else each enqueued once it commits (a broker outside the database)."""
    with transaction.atomic():
        stored = turn_rows.insert_turns([p.new_turn() for p in batch])
        if tasks and enqueues_in_transaction():
            _write_tasks(stored)
        elif tasks:
            for turn in stored:
                transaction.on_commit(partial(enqueue_reflection, turn.pk, turn.seat_id))
    return [(turn, True) for turn in stored]


def _repeat(one: _Pending, error: IntegrityError) -> Outcome:
    """A run id the seat already stored: that turn when the payload is the same, else ``Conflict``."""
    existing = Turn.objects.filter(seat=one.seat, run_id=one.record.run_id).first()
    if existing is None:
        return error
    differ = differing_fields(record_of(existing), one.record)
    if differ:
        return Conflict(
            f"run id {one.record.run_id!r} was already stored with another payload (differs in: {', '.join(differ)})",
            field="run_id", differing_fields=differ,
        )
    return existing, False


# this process's request threads share a commit when they store turns at the same moment
shared_commit: GroupCommit[_Pending, tuple[Turn, bool]] = GroupCommit(_store)


def completed_from_prefetch(*, seat: Seat, record: TurnRecord) -> TurnRecord:
    """The record with what it omitted taken from the run's frozen prefetch (the runtime's own values win).

    A record that states both its ask and its offered skills needs nothing from the prefetch: the
    snapshot is not read.
    """
    if record.skills_offered is not None and record.ask.strip():
        return record
    rendered = frozen_prefix.stored(seat_id=seat.pk, run_id=record.run_id) or {}
    filled = {}
    if record.skills_offered is None:
        filled["skills_offered"] = [int(i) for i in rendered.get("skills_offered") or []]
    if not record.ask.strip() and rendered.get("ask"):
        filled["ask"] = rendered["ask"]
    return record.model_copy(update=filled) if filled else record


def store_turn(*, seat: Seat, record: TurnRecord) -> tuple[Turn, bool]:
    """Store the record and its reflection task; ``(turn, True)`` once committed. A run id the seat
    already stored with the same payload is answered with that turn and enqueues nothing (``Conflict``
    naming the fields when the payload differs).

    Outside a transaction the turn shares its transaction and commit with the turns this process's
    other threads store at the same moment (``group_commit``); inside one it is written in it. A
    synchronous queue (the demo's) reflects each turn on its own request's thread, so it is not grouped.
    """
    pending = _Pending(seat, completed_from_prefetch(seat=seat, record=record))
    if transaction.get_autocommit() and not Conf.SYNC:
        return shared_commit.submit(pending)
    outcome = _store([pending])[0]
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


def differing_fields(stored: TurnRecord, repeat: TurnRecord) -> list[str]:
    """The record fields a repeat of a run id states differently from the stored turn, by name."""
    before, after = stored.model_dump(mode="json"), repeat.model_dump(mode="json")
    return sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))


def record_of(turn: Turn) -> TurnRecord:
    """A stored turn's record, typed (older rows keep loading)."""
    return TurnRecord.from_stored(turn.payload)
