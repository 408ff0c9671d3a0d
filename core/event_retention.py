"""Event retention: every catalogued event belongs to one family, and each family has a horizon.

| family          | kept     | why                                                                 |
|-----------------|----------|---------------------------------------------------------------------|
| auxiliary_spend | 35 days  | a month of calls to read row by row; older ones live on, rolled up  |
|                 |          | into ``SpendDay`` (the budget counters are never swept)             |
| turn_telemetry  | 91 days  | the health and trends pages read at most 90 days                    |
| turn_record     | 1 year   | what a turn's reflection did and stored (the turn page, the decider) |
| skills          | 1 year   | a skill's life: synthesized, refined, staled, archived, promoted    |
| pass_reports    | 30 days  | what a background pass did on a tick                                |
| audit           | kept     | what a person decided, and what decided a lesson's fate              |

Each event class names its family (``RETENTION``; defining a class without one is an error). The
sweep deletes oldest first, a bounded number of rows a tick; spend is rolled up
a day at a time in the same transaction as its delete, so nothing is counted twice or lost.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.db import transaction
from django.db.models import BigIntegerField, Count, F, Sum
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast
from django.utils import timezone

from core.event_types import AuxiliarySpend, catalogue

DELETE_BATCH = 5_000  # rows per delete statement
MAX_ROWS_PER_TICK = 200_000  # per family: a large backlog drains over several ticks
MAX_SPEND_DAYS_PER_TICK = 31  # days of spend rolled up per tick


@dataclass(frozen=True)
class Family:
    name: str  # an ``event_types.Retention``: each event class names its own family
    horizon: timedelta | None  # None: kept

    @property
    def names(self) -> list[str]:
        return [cls.NAME for cls in catalogue() if cls.RETENTION == self.name]


SPEND = Family("auxiliary_spend", timedelta(days=35))
FAMILIES: tuple[Family, ...] = (
    SPEND,
    Family("turn_telemetry", timedelta(days=91)),
    Family("turn_record", timedelta(days=365)),
    Family("skills", timedelta(days=365)),
    Family("pass_reports", timedelta(days=30)),
    Family("audit", None),
)
_BY_NAME: dict[str, Family] = {family.name: family for family in FAMILIES}


def family_of(name: str) -> Family:
    """The family of the catalogued event named ``name``."""
    return _BY_NAME[next(cls.RETENTION for cls in catalogue() if cls.NAME == name)]


def day_start(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min), timezone.get_current_timezone())


# ---- the spend rollup --------------------------------------------------------------------------


def tokens(key: str):
    return Sum(Cast(KeyTextTransform(key, "payload"), BigIntegerField()))


SPEND_KEYS = ("stage", "purpose", "provider", "model", "outcome")  # what a SpendDay row is keyed on, with seat and day


def spend_groups(qs, by: tuple[str, ...] = ("seat_id", *SPEND_KEYS)):
    """``auxiliary_spend`` rows grouped ``by`` seat and payload keys: calls and summed tokens each."""
    keys = {k: KeyTextTransform(k, "payload") for k in by if k in SPEND_KEYS}
    return (
        qs.annotate(**keys)
        .values(*by)
        .annotate(calls=Count("id"), input_tokens=tokens("input_tokens"), output_tokens=tokens("output_tokens"))
        .order_by()
    )


def _fit(value, field: str) -> str:
    from core.models import SpendDay

    return str(value or "")[: getattr(SpendDay._meta.get_field(field), "max_length", None)]


def roll_up_day(day: date, cutoff: datetime) -> int:
    """Add the day's spend events older than ``cutoff`` to its ``SpendDay`` rows, then delete them."""
    from core.models import Event, SpendDay

    start = day_start(day)
    rows = Event.objects.filter(name=AuxiliarySpend.NAME, created_at__gte=start,
                                created_at__lt=min(cutoff, start + timedelta(days=1)))
    with transaction.atomic():
        for group in spend_groups(rows):
            key = {f: _fit(group[f], f) for f in SPEND_KEYS}
            added = dict(calls=F("calls") + group["calls"],
                         input_tokens=F("input_tokens") + (group["input_tokens"] or 0),
                         output_tokens=F("output_tokens") + (group["output_tokens"] or 0))
            if not SpendDay.objects.filter(day=day, seat_id=group["seat_id"], **key).update(**added):
                SpendDay.objects.create(day=day, seat_id=group["seat_id"], **key, calls=group["calls"],
                                        input_tokens=group["input_tokens"] or 0,
                                        output_tokens=group["output_tokens"] or 0)
        return rows.delete()[0]


def roll_up_spend(cutoff: datetime) -> int:
    """Roll up and delete spend older than ``cutoff``, oldest day first, a bounded number of days."""
    from core.models import Event

    deleted = 0
    for _ in range(MAX_SPEND_DAYS_PER_TICK):
        oldest = Event.objects.filter(name=AuxiliarySpend.NAME, created_at__lt=cutoff).order_by("created_at").first()
        if oldest is None:
            break
        deleted += roll_up_day(timezone.localdate(oldest.created_at), cutoff)
    return deleted


# ---- the sweep ----------------------------------------------------------------------------------


def _delete_older(names: list[str], cutoff: datetime) -> int:
    from core.models import Event

    deleted = 0
    while deleted < MAX_ROWS_PER_TICK:
        ids = list(Event.objects.filter(name__in=names, created_at__lt=cutoff)
                   .order_by("created_at").values_list("id", flat=True)[:DELETE_BATCH])
        if not ids:
            break
        with transaction.atomic():
            deleted += Event.objects.filter(id__in=ids).delete()[0]
        if len(ids) < DELETE_BATCH:
            break
    return deleted


def sweep(*, now: datetime | None = None, dry_run: bool = False) -> dict:
    """Delete every family's events past its horizon (spend rolled up first); counts per family."""
    now = now or timezone.now()
    if dry_run:  # the same deletes, counted and rolled back
        with transaction.atomic():
            counts = _sweep(now)
            transaction.set_rollback(True)
    else:  # each batch its own short transaction: the sweep never holds the write lock for long
        counts = _sweep(now)
    return {"dry_run": dry_run, "events_deleted": counts}


def _sweep(now: datetime) -> dict[str, int]:
    counts = {}
    for family in FAMILIES:
        if family.horizon is None:
            continue
        cutoff = now - family.horizon
        counts[family.name] = roll_up_spend(cutoff) if family is SPEND else _delete_older(family.names, cutoff)
    return counts
