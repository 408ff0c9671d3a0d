"""``manage.py backfill_embeddings [--model NAME]``: run the embedding fill minute after minute until done.

Each minute is the scheduled fill's own minute, under its duty and the same wall-clock minute's
budget (``fill_ledger``: what the tick already sent this minute is not sent again); a minute that
ran out (or that the provider ended) waits for the next minute to start. ``--model NAME`` re-embeds only the rows
stamped with that model (``none`` for the vectorless). It stops when nothing is left to send, when
the fill is paused on a configuration refusal, or after ``--max-minutes``.
"""

from __future__ import annotations

import time
from datetime import timedelta

from django.core.management import BaseCommand, CommandError
from django.utils import timezone

from core.providers.embeddings import get_embedder
from crewlet.models import Seat
from learning.management.commands._progress import bar, load_embedder
from learning.passes import duties, embed_fill


class Command(BaseCommand):
    help = "Fill missing or outdated vectors now, within the fill's per-minute budget."

    def add_arguments(self, parser):
        parser.add_argument("--model", metavar="NAME", help="only rows stamped with this model ('none': vectorless)")
        parser.add_argument("--max-minutes", type=int, default=600)

    def handle(self, *args, model=None, max_minutes=600, **options):
        embedder = get_embedder()
        if embedder is None:
            raise CommandError("embeddings are off (providers.embeddings.kind = none)")
        load_embedder(self.stdout)
        total = self._left(embedder, model)
        totals = {"filled": 0, "held": 0, "requests": 0, "minutes": 0}
        with bar(self.stdout, total=total, desc="backfill", unit="row") as advance:
            for minute in range(max_minutes):
                if minute:
                    _wait_for_the_next_minute()
                result = duties.run_singleton("learning.embed_fill", lambda: embed_fill.run_fill(only_model=model))
                totals["minutes"] += 1
                if not result.get("ran"):
                    if "paused_until" in result:
                        self.stdout.write(f"  fill paused until {result['paused_until']}: {result.get('why')}")
                        break
                else:
                    held = result["held_refused"] + result["held_unusable"] + result["held_empty"]
                    totals["filled"] += result["filled"]
                    totals["held"] += held
                    totals["requests"] += result["requests"]
                    advance(result["filled"] + held)
                    if result["stopped"] == "every seat filled" and not result["continued"]:
                        break
                    if result.get("paused_until"):
                        break
        left = self._left(embedder, model)
        self.stdout.write(
            f"  {totals['minutes']} minute(s), {totals['requests']} request(s); {left} row(s) still without a vector"
        )
        self.stdout.write(self.style.SUCCESS(f"changed: {totals['filled']} vector(s) filled, {totals['held']} held back"))

    def _left(self, embedder, model) -> int:
        now = timezone.now()
        count = 0
        for seat in Seat.objects.filter(active=True):
            count += sum(qs.count() for qs in embed_fill.pending(seat, model=embedder.model, dim=embedder.dim, now=now, only_model=model))
        return count + embed_fill.pending_pages(model=embedder.model, dim=embedder.dim, now=now, only_model=model).count()


def _wait_for_the_next_minute() -> None:
    """Sleep until the next wall-clock minute starts: its budget is the next one the fill may spend."""
    now = timezone.now()
    nxt = now.replace(second=0, microsecond=0) + timedelta(minutes=1)
    time.sleep(max(0.0, (nxt - now).total_seconds()))
