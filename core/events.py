"""The one way an observable state change is announced: an append-only ``Event`` row."""

from __future__ import annotations

import logging

from django.db import DatabaseError, transaction

log = logging.getLogger("core.events")


def publish(name: str, /, *, seat=None, turn_id: str = "", trace_id: str = "", best_effort: bool = False, **payload):
    """Append one event. ``best_effort`` (telemetry) logs a failed write once and returns None."""
    from core.models import Event

    fields = dict(name=name, seat=seat, turn_id=turn_id or "", trace_id=trace_id or turn_id or "", payload=_jsonable(payload))
    if not best_effort:
        return Event.objects.create(**fields)
    try:
        with transaction.atomic():  # a savepoint: a failed telemetry write never breaks the caller's transaction
            return Event.objects.create(**fields)
    except DatabaseError:
        log.warning("telemetry event %s could not be written", name, exc_info=True)
        return None


def publish_many(items: list[tuple[str, object, str, dict]]) -> None:
    """Append many telemetry events at once (``(name, seat, turn_id, payload)`` each): one bulk insert, best effort."""
    from core.models import Event

    if not items:
        return
    rows = [Event(name=name, seat=seat, turn_id=turn_id or "", trace_id=turn_id or "", payload=_jsonable(payload))
            for name, seat, turn_id, payload in items]
    try:
        with transaction.atomic():
            Event.objects.bulk_create(rows)
    except DatabaseError:
        log.warning("%d telemetry event(s) could not be written", len(rows), exc_info=True)


def latest(name: str, *, seat=None):
    from core.models import Event

    qs = Event.objects.filter(name=name)
    if seat is not None:
        qs = qs.filter(seat=seat)
    return qs.order_by("-created_at", "-id").first()


def _jsonable(value):
    from datetime import date, datetime

    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return value
