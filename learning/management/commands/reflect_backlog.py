"""Reflect stored turns that never reflected (a broker that was down, a budget that was spent)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, time

from django.core.management import BaseCommand, CommandError
from django.utils import timezone
from django.utils.dateparse import parse_date

from learning.management.commands._progress import bar, load_embedder
from learning.models import Turn


class Command(BaseCommand):
    help = "Reflect every stored turn with no reflection yet, oldest first; --since DATE and --seat HANDLE narrow it."

    def add_arguments(self, parser):
        parser.add_argument("--since", help="only turns received on or after this date (YYYY-MM-DD)")
        parser.add_argument("--seat", help="only this seat's turns (its handle)")

    def _pending(self, since: str | None, seat: str | None):
        qs = Turn.objects.filter(reflected_at__isnull=True).order_by("received_at", "id")
        if since:
            try:
                day = parse_date(since)
            except ValueError:  # the shape of a date, but not a day of the calendar
                day = None
            if day is None:
                raise CommandError(f"--since: {since!r} is not a date (YYYY-MM-DD)")
            qs = qs.filter(received_at__gte=timezone.make_aware(datetime.combine(day, time.min)))
        if seat:
            from crewlet.models import Seat

            if not Seat.objects.filter(handle=seat).exists():
                raise CommandError(f"--seat: no seat with handle {seat!r}")
            qs = qs.filter(seat__handle=seat)
        return list(qs.values_list("id", flat=True))

    def handle(self, *args, since=None, seat: str | None = None, **options):
        from learning.reflection import reflect_turn

        ids = self._pending(since, seat)
        statuses: Counter = Counter()
        gates: Counter = Counter()
        if ids:
            load_embedder(self.stdout)
        with bar(self.stdout, total=len(ids), desc="reflecting", unit="turn") as advance:
            for turn_id in ids:
                result = reflect_turn(turn_id, drain=False)  # exactly the turns listed, each reported
                statuses[result["status"]] += 1
                if result.get("gate"):
                    gates[result["gate"]] += 1
                advance()
        summary = ", ".join(f"{n} {status}" for status, n in sorted(statuses.items())) or "nothing to reflect"
        self.stdout.write(f"{len(ids)} turn(s) without a reflection: {summary}")
        if gates:
            self.stdout.write("gates closed: " + ", ".join(f"{g} x{n}" for g, n in sorted(gates.items())))
