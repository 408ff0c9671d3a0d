"""Auxiliary spend as people read it: calls and tokens per stage and purpose over whole days.

The totals are the ``SpendDay`` rollup (spend the event retention swept) plus the
``auxiliary_spend`` events still kept. A sweep moves a day's events into the rollup and deletes
them in one transaction, so the totals read the same before and after it. Windows are whole days,
the rollup's grain.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from django.db.models import Sum

from core import event_retention

if TYPE_CHECKING:
    from crewlet.models import Seat


@dataclass(frozen=True)
class SpendLine:
    stage: str
    purpose: str
    calls: int
    input_tokens: int
    output_tokens: int

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


def by_purpose(*, since: date | None = None, seat: Seat | None = None) -> list[SpendLine]:
    """Spend per (stage, purpose) from day ``since`` on (every day when None), most tokens first."""
    from core.models import Event, SpendDay

    sums: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    rolled = SpendDay.objects.all()
    kept = Event.objects.filter(name=event_retention.SPEND.names[0])
    if since is not None:
        rolled = rolled.filter(day__gte=since)
        kept = kept.filter(created_at__gte=event_retention.day_start(since))
    if seat is not None:
        rolled, kept = rolled.filter(seat=seat), kept.filter(seat=seat)
    rows = list(rolled.values("stage", "purpose").annotate(
        calls=Sum("calls"), input_tokens=Sum("input_tokens"), output_tokens=Sum("output_tokens")).order_by())
    rows += list(event_retention.spend_groups(kept, by=("stage", "purpose")))
    for row in rows:
        line = sums[(row["stage"] or "", row["purpose"] or "")]
        line[0] += row["calls"] or 0
        line[1] += row["input_tokens"] or 0
        line[2] += row["output_tokens"] or 0
    lines = [SpendLine(stage, purpose, *values) for (stage, purpose), values in sums.items()]
    return sorted(lines, key=lambda x: (-x.tokens, -x.calls, x.stage, x.purpose))


def total(lines: list[SpendLine]) -> SpendLine:
    return SpendLine("", "", sum(x.calls for x in lines), sum(x.input_tokens for x in lines),
                     sum(x.output_tokens for x in lines))
