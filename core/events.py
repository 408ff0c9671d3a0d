"""The one way an observable state change is announced: an append-only ``Event`` row.

``publish`` takes an instance of a class in the catalogue (``core.event_types``); readers get
instances back (``latest``, ``recorded``), old rows included. Inside ``batched()`` telemetry is
held and written in one bulk insert when the outermost batch closes (a reflection pass: one INSERT
for its events); an event that is not telemetry is always written at once. Every string of a payload
is scrubbed of secrets (``core.scrub``) before it is written.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic

from django.db import DatabaseError, transaction

from core.event_types import E, EventPayload, load
from core.scrub import scrub_json

if TYPE_CHECKING:
    from crewlet.models import Seat

log = logging.getLogger("core.events")

_batches = threading.local()  # the open batches of this thread, innermost last


def _open_batch() -> list | None:
    stack = getattr(_batches, "stack", None)
    return stack[-1] if stack else None


@contextmanager
def batched() -> Iterator[list]:
    """Hold the telemetry published inside the block and write it in ONE bulk insert at the end.

    Nested: an inner batch that ends cleanly hands its events to the outer one; an inner batch left
    by an exception drops them (they announced writes its savepoint rolled back). Only the
    outermost batch writes, inside whatever transaction is open there, under its own savepoint, a
    failure logged.
    """
    stack = _batches.__dict__.setdefault("stack", [])
    held: list = []
    stack.append(held)
    try:
        yield held
    except BaseException:
        stack.pop()
        raise
    stack.pop()
    if stack:
        stack[-1].extend(held)
    else:
        _insert(held)


def publish(event: EventPayload, /, *, seat: Seat | None = None, turn_id: str = "", trace_id: str = ""):
    """Append one event. Telemetry (the class's ``BEST_EFFORT``) logs a failed write once and returns None."""
    from core.models import Event

    if not isinstance(event, EventPayload):
        raise TypeError(f"publish takes an event from core.event_types, not {type(event).__name__}")
    fields = dict(
        name=event.NAME, seat=seat, turn_id=turn_id or "", trace_id=trace_id or turn_id or "",
        payload=scrub_json(event.model_dump(mode="json")),
    )
    if not event.BEST_EFFORT:
        return Event.objects.create(**fields)
    held = _open_batch()
    if held is not None:
        row = Event(**fields)
        held.append(row)
        return row
    try:
        with transaction.atomic():  # a savepoint: a failed telemetry write never breaks the caller's transaction
            return Event.objects.create(**fields)
    except DatabaseError:
        log.warning("telemetry event %s could not be written", event.NAME, exc_info=True)
        return None


def publish_many(items: list[tuple[EventPayload, Any, str]]) -> None:
    """Append many telemetry events at once (``(event, seat, turn_id)`` each): one bulk insert, best effort."""
    from core.models import Event

    if not items:
        return
    for event, _seat, _turn in items:
        if not isinstance(event, EventPayload):
            raise TypeError(f"publish_many takes events from core.event_types, not {type(event).__name__}")
    rows = [Event(name=event.NAME, seat=seat, turn_id=turn_id or "", trace_id=turn_id or "",
                  payload=scrub_json(event.model_dump(mode="json")))
            for event, seat, turn_id in items]
    held = _open_batch()
    if held is not None:
        held.extend(rows)
        return
    _insert(rows)


def _model():
    from core.models import Event

    return Event


def _insert(rows: list) -> None:
    """One bulk insert of telemetry rows, under a savepoint; a failure is logged, never raised."""
    if not rows:
        return
    try:
        with transaction.atomic():
            _model().objects.bulk_create(rows)
    except DatabaseError:
        log.warning("%d telemetry event(s) could not be written", len(rows), exc_info=True)


@dataclass(frozen=True)
class Recorded(Generic[E]):
    """A stored event read back: the typed payload and where and when it was written."""

    id: int
    at: datetime
    seat_id: int | None
    turn_id: str
    event: E


def _read(cls: type[E], row) -> Recorded[E] | None:
    event = load(cls, row.payload)
    if event is None:
        return None
    return Recorded(id=row.pk, at=row.created_at, seat_id=row.seat_id, turn_id=row.turn_id, event=event)


def rows(cls: type[EventPayload], *, seat: Seat | None = None, since: datetime | None = None, turn_id: str | None = None):
    """The ``Event`` rows of one catalogued class, newest first (a queryset, for counting and SQL)."""
    from core.models import Event

    qs = Event.objects.filter(name=cls.NAME)
    if seat is not None:
        qs = qs.filter(seat=seat)
    if since is not None:
        qs = qs.filter(created_at__gte=since)
    if turn_id is not None:
        qs = qs.filter(turn_id=turn_id)
    return qs.order_by("-created_at", "-id")


def latest(cls: type[E], *, seat: Seat | None = None) -> Recorded[E] | None:
    """The newest readable event of ``cls`` (for ``seat``, when given)."""
    for row in rows(cls, seat=seat)[:20]:
        found = _read(cls, row)
        if found is not None:
            return found
    return None


def recorded(cls: type[E], *, seat: Seat | None = None, since: datetime | None = None, turn_id: str | None = None, chunk_size: int = 1000):
    """Every readable event of ``cls``, newest first; a row no shape can read is logged and skipped."""
    for row in rows(cls, seat=seat, since=since, turn_id=turn_id).iterator(chunk_size=chunk_size):
        found = _read(cls, row)
        if found is not None:
            yield found
