"""The learning-health page in a terminal: skill reuse per seat, the prefetch blocks' hit rates, what
the similar-work recall found, and the persist decider's tiers over a window (``learning.review.health``)."""

from __future__ import annotations

from django.core.management import BaseCommand, CommandError

from learning.prefetch.similar_work import RECALL_OUTCOMES
from learning.review import health


def _share(n: int, total: int) -> str:
    return f"{n} ({n / total:.0%})"


class Command(BaseCommand):
    help = ("Learning health over the last --days (7): skill reuse per seat, prefetch hit rates, what the similar-work "
            "recall found, persist decider tiers; --seat HANDLE narrows it to one seat; --check exits 1 when a seat "
            "is below the Berlot-Attwell threshold.")

    def add_arguments(self, parser):
        parser.add_argument("--days", default=str(health.DEFAULT_WINDOW_DAYS), help="the window, in whole days")
        parser.add_argument("--seat", help="only this seat (its handle)")
        parser.add_argument("--check", action="store_true", help="exit 1 when a seat is below the threshold")

    def handle(self, *args, days: str, seat: str | None = None, check: bool = False, **options):
        from crewlet.models import Seat

        if not days.isdigit() or int(days) < 1:
            raise CommandError(f"--days: {days!r} is not a whole number of days (1 or more)")
        one = None
        if seat:
            one = Seat.objects.filter(handle=seat).first()
            if one is None:
                raise CommandError(f"--seat: no seat with handle {seat!r}")
        since = health.window_start(int(days))
        scope = f"last {days} day{'s' if int(days) != 1 else ''}" + (f", {seat}" if seat else "")
        seats = [h for h in health.seat_health() if one is None or h.seat.pk == one.pk]
        self._skills(seats)
        self._prefetch(since, one, scope)
        self._recall(since, one, scope)
        self._tiers(since, one, scope)
        flagged = [h.seat.handle for h in seats if h.flagged]
        if check and flagged:
            raise CommandError(f"{len(flagged)} seat(s) below the Berlot-Attwell threshold: {', '.join(flagged)}",
                               returncode=1)

    def _skills(self, seats) -> None:
        self.stdout.write(f"Skill reuse per seat (Berlot-Attwell threshold {health.BERLOT_ATTWELL_THRESHOLD:g} uses a skill)")
        if not seats:
            self.stdout.write("  no seats")
        width = max((len(h.seat.handle) for h in seats), default=0)
        label = max((len(health.VERDICT_LABEL[h.verdict]) for h in seats), default=0)
        for h in seats:
            row = h.row
            figures = "" if row is None or not row.total_skills else (
                f"  {row.total_skills} skill(s), {row.avg_uses_per_skill or 0:.2f} uses a skill"
                + (f", {row.avg_skill_age_days:.1f} days old on average" if row.avg_skill_age_days is not None else ""))
            self.stdout.write(f"  {h.seat.handle:<{width}}  {health.VERDICT_LABEL[h.verdict]:<{label}}{figures}".rstrip())

    def _prefetch(self, since, seat, scope: str) -> None:
        turns, rates = health.prefetch_hit_rates(since=since, seat=seat)
        self.stdout.write(f"\nPrefetch hit rate per block ({turns} turn start(s), {scope})")
        if not rates:
            self.stdout.write("  no prefetch_summary events")
        width = max((len(r.block) for r in rates), default=0)
        for r in rates:
            rate = "unknown (never recorded)" if r.rate is None else f"{r.rate:.0%} of {r.observed}"
            size = f", ~{r.avg_bytes:,.0f} B" if r.avg_bytes is not None else ""
            self.stdout.write(f"  {r.block:<{width}}  {rate}{size}")

    def _recall(self, since, seat, scope: str) -> None:
        outcomes = health.similar_work_recall(since=since, seat=seat)
        self._shares("What the similar-work recall found", "turn start(s)", scope, "prefetch_summary",
                     [(RECALL_OUTCOMES.get(outcome, outcome), n) for outcome, n in outcomes if n])

    def _tiers(self, since, seat, scope: str) -> None:
        self._shares("Persist decider tiers", "decision(s)", scope, "persist_decider_completed",
                     health.tier_distribution(since=since, seat=seat))

    def _shares(self, title: str, unit: str, scope: str, event: str, rows: list[tuple[str, int]]) -> None:
        """A distribution of counts, each with its share of the total; the event named when none was recorded."""
        total = sum(n for _label, n in rows)
        self.stdout.write(f"\n{title} ({total} {unit}, {scope})")
        if not total:
            self.stdout.write(f"  no {event} events")
            return
        width = max(len(label) for label, _n in rows)
        for label, n in rows:
            self.stdout.write(f"  {label:<{width}}  {_share(n, total)}")
