"""Learning health: is the skill library earning its keep, are the prefetches firing, what does the decider keep.

The skill rollup is the ``learning_health`` SQL view. The load-bearing number is
``avg_uses_per_skill``: below the Berlot-Attwell threshold the library is not doing what it
claims. A new seat sits at zero until it has lived long enough to retrieve, so a seat whose
skills are on average younger than ``YOUNG_SEAT_MAX_AGE_DAYS`` is discounted, not flagged.
Prefetch hit rates, what the similar-work recall found, and the persist decider's tier
distribution are read from their events over a window. Anything not observed is unknown (None), never zero.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.utils import timezone

from core import events
from crewlet.models import Seat
from learning.events import PersistDeciderCompleted, PrefetchSummary
from learning.models import LearningHealth
from learning.prefetch.similar_work import RECALL_OUTCOMES

BERLOT_ATTWELL_THRESHOLD = 0.1  # avg_uses_per_skill below this: investigate retrieval or granularity
YOUNG_SEAT_MAX_AGE_DAYS = 14.0  # avg_skill_age_days below this: too young to judge reuse
WINDOW_DAYS_CHOICES = (1, 7, 30, 90)
DEFAULT_WINDOW_DAYS = 7
PERSIST_TIERS = ("LONG", "SHORT", "DOC", "NOOP")  # persist_decider_completed.classification
UNRECORDED = "unrecorded"

NO_SKILLS = "no_skills"
YOUNG = "young"
BELOW_THRESHOLD = "below_threshold"
HEALTHY = "healthy"
VERDICT_LABEL = {
    HEALTHY: "earning its keep",
    YOUNG: f"young (skills < {YOUNG_SEAT_MAX_AGE_DAYS:g} days old on average): not judged yet",
    BELOW_THRESHOLD: f"skills rarely reused: below the Berlot-Attwell line of {BERLOT_ATTWELL_THRESHOLD:g} uses a skill",
    NO_SKILLS: "no skills yet",
}


@dataclass(frozen=True)
class SeatHealth:
    seat: Seat
    row: LearningHealth | None
    verdict: str

    @property
    def flagged(self) -> bool:
        return self.verdict == BELOW_THRESHOLD


def verdict(row: LearningHealth | None) -> str:
    """The Berlot-Attwell reading of one seat, young seats discounted."""
    if row is None or not row.total_skills or row.avg_uses_per_skill is None:
        return NO_SKILLS
    if row.avg_uses_per_skill >= BERLOT_ATTWELL_THRESHOLD:
        return HEALTHY
    if row.avg_skill_age_days is not None and row.avg_skill_age_days < YOUNG_SEAT_MAX_AGE_DAYS:
        return YOUNG
    return BELOW_THRESHOLD


def seat_health() -> list[SeatHealth]:
    """Every seat with its view row (None: no skills yet), flagged seats first."""
    rows = {row.seat_id: row for row in LearningHealth.objects.all()}
    seats = Seat.objects.order_by("handle")
    out = [SeatHealth(seat, rows.get(seat.pk), verdict(rows.get(seat.pk))) for seat in seats]
    order = {BELOW_THRESHOLD: 0, YOUNG: 1, HEALTHY: 2, NO_SKILLS: 3}
    return sorted(out, key=lambda h: (order[h.verdict], h.seat.handle))


def window_start(days: int, now: datetime | None = None) -> datetime:
    return (now or timezone.now()) - timedelta(days=days)


@dataclass(frozen=True)
class BlockRate:
    block: str
    observed: int  # turns whose summary recorded this block's hit
    hits: int
    unrecorded: int  # turns that listed the block but recorded no hit for it
    avg_bytes: float | None

    @property
    def rate(self) -> float | None:
        return self.hits / self.observed if self.observed else None


def prefetch_hit_rates(*, since: datetime, seat: Seat | None = None) -> tuple[int, list[BlockRate]]:
    """(turns summarised, per-block rates) from ``prefetch_summary`` events since ``since``."""
    turns = 0
    observed: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    unrecorded: Counter[str] = Counter()
    byte_sums: Counter[str] = Counter()
    byte_counts: Counter[str] = Counter()
    for recorded in events.recorded(PrefetchSummary, since=since, seat=seat):
        turns += 1
        for block, outcome in recorded.event.blocks.items():
            if outcome.hit is None:
                unrecorded[block] += 1
                continue
            observed[block] += 1
            hits[block] += outcome.hit
            if outcome.bytes is not None:
                byte_sums[block] += outcome.bytes
                byte_counts[block] += 1
    blocks = sorted(set(observed) | set(unrecorded))
    return turns, [
        BlockRate(
            block=b,
            observed=observed[b],
            hits=hits[b],
            unrecorded=unrecorded[b],
            avg_bytes=byte_sums[b] / byte_counts[b] if byte_counts[b] else None,
        )
        for b in blocks
    ]


def tier_distribution(*, since: datetime, seat: Seat | None = None) -> list[tuple[str, int]]:
    """Counts per persist tier (LONG / SHORT / DOC / NOOP first, then anything else recorded)."""
    counts: Counter[str] = Counter()
    for recorded in events.recorded(PersistDeciderCompleted, since=since, seat=seat):
        raw = recorded.event.classification
        counts[str(raw).strip().upper() if raw else UNRECORDED] += 1
    extra = sorted(k for k in counts if k not in PERSIST_TIERS)
    return [(tier, counts[tier]) for tier in (*PERSIST_TIERS, *extra)]


def similar_work_recall(*, since: datetime, seat: Seat | None = None) -> list[tuple[str, int]]:
    """Turn starts per outcome of the similar-work recall (``RECALL_OUTCOMES`` in their order, then
    anything else recorded; ``unrecorded`` for summaries written before the outcome was)."""
    counts: Counter[str] = Counter()
    for recorded in events.recorded(PrefetchSummary, since=since, seat=seat):
        counts[recorded.event.similar_prior_work_recall or UNRECORDED] += 1
    extra = sorted(k for k in counts if k not in RECALL_OUTCOMES)
    return [(outcome, counts[outcome]) for outcome in (*RECALL_OUTCOMES, *extra)]
