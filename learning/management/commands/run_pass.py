"""``manage.py run_pass NAME [--seat HANDLE] [--dry-run]``: run one background pass now, under its duty."""

from __future__ import annotations

import json

from django.core.management import BaseCommand, CommandError

from crewlet.models import Seat
from learning.management.commands._progress import bar, seat_lines, summary_lines
from learning.passes import duties, schedules


class Command(BaseCommand):
    help = "Run one background pass now (claiming its duty, so it never overlaps the scheduled tick)."

    def add_arguments(self, parser):
        parser.add_argument("name", choices=sorted(schedules.LOOPS))
        parser.add_argument("--seat", metavar="HANDLE", help="only this seat (passes that walk seats)")
        parser.add_argument("--dry-run", action="store_true", help="report what the pass would change; change nothing")
        parser.add_argument("--json", action="store_true", help="print the whole result as JSON")

    def handle(self, *args, name, seat: str | None = None, dry_run=False, json=False, **options):
        fn = schedules.service(name)
        kwargs = self._kwargs(fn, name, seat, dry_run)
        seats = 1 if seat else Seat.objects.filter(active=True).count()
        with bar(self.stdout, total=seats, desc=name) as advance:
            if schedules.accepts(fn, "progress"):
                kwargs["progress"] = advance
            if dry_run:  # writes nothing, so it needs no claim
                result = {"ran": True, **fn(**kwargs)}
            else:
                result = duties.run_singleton(schedules.LOOPS[name].schedule_name, lambda: fn(**kwargs))
        self._report(name, result, dry_run, as_json=json)
        if result.get("ran") is False and "held elsewhere" in str(result.get("why", "")):
            raise CommandError(result["why"])

    def _kwargs(self, fn, name: str, handle: str | None, dry_run: bool) -> dict:
        kwargs: dict[str, object] = {}
        if handle:
            if not schedules.accepts(fn, "seat"):
                raise CommandError(f"pass {name} does not take --seat")
            found = Seat.objects.select_related("role", "company").filter(handle=handle).first()
            if found is None:
                raise CommandError(f"no seat with handle {handle!r}")
            kwargs["seat"] = found
        if dry_run:
            if not schedules.accepts(fn, "dry_run"):
                raise CommandError(f"pass {name} has no dry run (it would call a model to know what it changes)")
            kwargs["dry_run"] = True
        return kwargs

    def _report(self, name: str, result: dict, dry_run: bool, *, as_json: bool) -> None:
        if as_json:
            self.stdout.write(json.dumps(result, indent=2, default=str))
            return
        self.stdout.write(f"pass {name}{' (dry run)' if dry_run else ''}:")
        for line in summary_lines(result) + (seat_lines(result) if dry_run else []):
            self.stdout.write(line)
        changed = changes(result)
        verb = "would change" if dry_run else "changed"
        self.stdout.write(self.style.SUCCESS(f"{verb}: {changed or 'nothing'}"))


CHANGE_KEYS = (
    "non_terminal_dropped", "tool_free_dropped", "consolidated_dropped", "clusters_folded", "episodes_compacted",
    "compacted_evicted", "exemplars_evicted", "staled", "archived", "filled", "held_refused", "held_unusable",
    "held_empty", "continued", "diary_short_deleted", "prefetch_snapshots_deleted", "refresh_ledgers_deleted",
    "drafted", "promoted", "drafts", "would_offer",
)


def changes(result: dict) -> str:
    """What a pass changed, from its report's counts (every pass names its counts its own way)."""
    counted = {key: len(v) if isinstance(v, list) else v for key in CHANGE_KEYS if (v := result.get(key))}
    parts = [f"{key}={n}" for key, n in counted.items() if isinstance(n, int) and not isinstance(n, bool) and n]
    if isinstance(result.get("would_fill"), dict):
        n = sum(v["notes"] + v["episodes"] for v in result["would_fill"].values())
        parts.append(f"rows_to_fill={n}")
    return ", ".join(parts)
