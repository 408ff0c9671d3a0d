"""``manage.py install_schedules``: create or align every background loop's django-q2 schedule, idempotently."""

from __future__ import annotations

from django.core.management import BaseCommand

from crewlet import config
from learning.management.commands._progress import bar
from learning.passes import schedules


class Command(BaseCommand):
    help = "Install the background loops' schedules (by name; a second run changes nothing)."

    def handle(self, *args, **options):
        cfg = config.current()
        with bar(self.stdout, total=len(schedules.LOOPS), desc="schedules", unit="schedule") as advance:
            outcome = schedules.install(cfg=cfg)
            advance(len(outcome))
        for loop in schedules.LOOPS.values():
            state = "on" if loop.enabled(cfg) else "off (its ticks claim nothing)"
            self.stdout.write(
                f"  {loop.schedule_name}: {outcome[loop.schedule_name]}, every {loop.minutes(cfg)} min, {state}"
            )
        created = sum(1 for v in outcome.values() if v == "created")
        updated = sum(1 for v in outcome.values() if v == "updated")
        self.stdout.write(self.style.SUCCESS(f"changed: {created} created, {updated} updated"))
