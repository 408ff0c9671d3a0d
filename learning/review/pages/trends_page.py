"""The trends page's content: three daily series over a selectable window, each drawn as columns, and
the window's uses per skill."""

from __future__ import annotations

from typing import TYPE_CHECKING

from crewlet.errors import BadInput
from learning.review import trends
from learning.review.pages.charts import column_chart

if TYPE_CHECKING:
    from crewlet.models import Seat


def parse_window(raw: str | None) -> int:
    if raw in (None, ""):
        return trends.DEFAULT_WINDOW_DAYS
    try:
        days = int(raw)
    except ValueError:
        days = -1
    if days not in trends.WINDOW_DAYS_CHOICES:
        raise BadInput(f"window: choose one of {list(trends.WINDOW_DAYS_CHOICES)} days, got {raw!r}")
    return days


def _points(series):
    return [(d.day, d.value, d.detail) for d in series]


def _total(series) -> int:
    return int(sum(d.value or 0 for d in series))


def trends_context(*, window_days: int, seat: Seat | None = None) -> dict:
    rates = trends.hit_rate(window_days=window_days, seat=seat)
    uses = trends.skill_uses(window_days=window_days, seat=seat)
    notes = trends.notes_written(window_days=window_days, seat=seat)
    known = [d.value for d in rates if d.value is not None]
    return {
        "window_days": window_days,
        "window_choices": trends.WINDOW_DAYS_CHOICES,
        "selected_seat": seat,
        "hit_chart": column_chart(_points(rates), scale_max=1.0, fmt=lambda v: f"{v:.0%}"),
        "hit_average": f"{sum(known) / len(known):.0%}" if known else "",
        "hit_days": len(known),
        "uses_chart": column_chart(_points(uses), fmt=lambda v: f"{v:,.0f}"),
        "uses_total": _total(uses),
        "notes_chart": column_chart(_points(notes), fmt=lambda v: f"{v:,.0f}"),
        "notes_total": _total(notes),
        "per_skill": trends.uses_per_skill(window_days=window_days, seat=seat),
    }
