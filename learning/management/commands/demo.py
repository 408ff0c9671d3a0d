"""Run the whole learning loop end to end on the embedded defaults (no keys, no network)."""

import importlib
import time

from django.core.management import BaseCommand, call_command

from learning.demo import STEPS
from learning.demo.context import DemoContext


class Command(BaseCommand):
    help = "Migrate, apply crewlet.toml.example and run every capability's demo step, printing what each did."

    def handle(self, *args, **options):
        call_command("migrate", verbosity=0)
        ctx = DemoContext(out=self.stdout, style=self.style)
        for name in STEPS:
            try:
                module = importlib.import_module(name)
            except ModuleNotFoundError as exc:
                if exc.name == name:
                    continue
                raise
            started = time.monotonic()
            module.run(ctx)
            ctx.line(self.style.SUCCESS(f"   ({name.rsplit('.', 1)[1]} step: {time.monotonic() - started:.1f}s)"))
        self.stdout.write(self.style.SUCCESS("\ndemo complete"))
