"""The learning-health page's content: the view's rows with their verdicts, and four charts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.utils import timezone

from core import spend
from crewlet.errors import BadInput
from learning.prefetch.similar_work import RECALL_OUTCOMES
from learning.review import health
from learning.review.pages.charts import bar_chart

if TYPE_CHECKING:
    from crewlet.models import Seat

TONE = {health.HEALTHY: "good", health.YOUNG: "muted", health.BELOW_THRESHOLD: "bad", health.NO_SKILLS: "unknown"}


@dataclass(frozen=True)
class Row:
    """One seat's line on the page: the view's row, its verdict and how to show it."""

    health: health.SeatHealth
    label: str
    tone: str

    @property
    def seat(self):
        return self.health.seat

    @property
    def row(self):
        return self.health.row

    @property
    def verdict(self) -> str:
        return self.health.verdict

    @property
    def flagged(self) -> bool:
        return self.health.flagged


def parse_window(raw: str | None) -> int:
    if raw in (None, ""):
        return health.DEFAULT_WINDOW_DAYS
    try:
        days = int(raw)
    except ValueError:
        days = -1
    if days not in health.WINDOW_DAYS_CHOICES:
        raise BadInput(f"window: choose one of {list(health.WINDOW_DAYS_CHOICES)} days, got {raw!r}")
    return days


def _usage_chart(rows):
    known = [h.row.avg_uses_per_skill for h in rows if h.row is not None and h.row.avg_uses_per_skill is not None]
    scale = max([health.BERLOT_ATTWELL_THRESHOLD * 4, *known]) * 1.05
    bars = [
        (
            h.seat.handle,
            h.row.avg_uses_per_skill if h.row else None,
            f"{h.row.avg_uses_per_skill:.2f} uses/skill" if h.row else "no skills",
            TONE[h.verdict],
        )
        for h in rows
    ]
    return bar_chart(
        bars, scale_max=scale, marker=health.BERLOT_ATTWELL_THRESHOLD,
        marker_label=f"threshold {health.BERLOT_ATTWELL_THRESHOLD:g}",
    )


def _hit_tone(rate: float | None) -> str:
    if rate is None:
        return "unknown"
    if rate == 0:
        return "bad"  # a block stuck at 0% is almost always configuration, not the turn
    return "good" if rate >= 0.5 else "warn"


def _prefetch_chart(rates):
    bars = []
    for r in rates:
        caption = "not recorded" if r.rate is None else f"{r.rate:.0%} of {r.observed} turns"
        if r.avg_bytes is not None:
            caption += f", ~{r.avg_bytes:,.0f} B"
        bars.append((r.block, r.rate, caption, _hit_tone(r.rate)))
    return bar_chart(bars, scale_max=1.0)


def _tier_chart(tiers):
    total = sum(n for _tier, n in tiers)
    tone = {"LONG": "info", "SHORT": "good", "DOC": "warn", "NOOP": "muted"}
    bars = [
        (tier, (n / total) if total else None, f"{n} ({n / total:.0%})" if total else "no decisions", tone.get(tier, "muted"))
        for tier, n in tiers
    ]
    return bar_chart(bars, scale_max=1.0), total


RECALL_TONE = {"shown": "good", "close_call": "info", "unlike": "warn", "none": "muted", "failed": "bad"}


def _recall_chart(outcomes):
    total = sum(n for _outcome, n in outcomes)
    bars = [
        (RECALL_OUTCOMES.get(outcome, outcome), n / total, f"{n} ({n / total:.0%})", RECALL_TONE.get(outcome, "muted"))
        for outcome, n in outcomes
        if n
    ] if total else []
    return bar_chart(bars, scale_max=1.0), total


def health_context(*, window_days: int, seat: Seat | None = None) -> dict:
    rows = [Row(h, health.VERDICT_LABEL[h.verdict], TONE[h.verdict]) for h in health.seat_health()]
    since = health.window_start(window_days)
    turns, rates = health.prefetch_hit_rates(since=since, seat=seat)
    tier_chart, decisions = _tier_chart(health.tier_distribution(since=since, seat=seat))
    recall_chart, recalls = _recall_chart(health.similar_work_recall(since=since, seat=seat))
    spend_lines = spend.by_purpose(since=timezone.localdate(since), seat=seat)
    return {
        "spend_lines": spend_lines,
        "spend_total": spend.total(spend_lines),
        "rows": rows,
        "flagged": [h for h in rows if h.flagged],
        "young": [h for h in rows if h.verdict == health.YOUNG],
        "usage_chart": _usage_chart(rows),
        "prefetch_turns": turns,
        "prefetch_rates": rates,
        "prefetch_chart": _prefetch_chart(rates),
        "tier_chart": tier_chart,
        "recall_chart": recall_chart,
        "recalls": recalls,
        "decisions": decisions,
        "window_days": window_days,
        "window_choices": health.WINDOW_DAYS_CHOICES,
        "selected_seat": seat,
        "threshold": health.BERLOT_ATTWELL_THRESHOLD,
        "young_days": health.YOUNG_SEAT_MAX_AGE_DAYS,
    }
