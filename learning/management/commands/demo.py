"""Run the whole learning loop end to end on the embedded defaults (no keys, no network)."""

import importlib
import time
from pathlib import Path

from django.core.management import BaseCommand, call_command

from demo import STEPS
from demo.state import DemoContext


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
        self._hand_over(ctx)

    def _hand_over(self, ctx: DemoContext) -> None:
        """Where the demo's database and tokens are, and how to serve them."""
        from django.conf import settings
        from django.db import connection

        path = Path(settings.VAR_DIR) / "demo-tokens.txt"
        lines = [f"# API tokens of the demo database {connection.settings_dict['NAME']} (each acts as its seat)"]
        lines += [f"{handle:<9} {token}" for handle, token in sorted(ctx.tokens.items())]
        if ctx.operator_token:
            lines.append(f"{'operator':<9} {ctx.operator_token}")
        path.write_text("\n".join(lines) + "\n")
        path.chmod(0o600)
        ana = ctx.tokens.get("ana", "")
        self.stdout.write("\nserve it:  make serve   (this database and crewlet.toml.example at http://127.0.0.1:8000/)")
        self.stdout.write(f"tokens:    {path} (full values)")
        if ana:
            self.stdout.write(f"try it:    curl -H 'Authorization: Bearer {ana}' http://127.0.0.1:8000/api/v1/agents/ana/memory")
            self.stdout.write("MCP:       .venv/bin/python examples/mcp/check.py   (an MCP client starting manage.py mcp --seat ana)")
            self.stdout.write("steps:     docs/integration.md (a curl and a crewlet_client line for each)")
        self.stdout.write("API docs:  http://127.0.0.1:8000/api/v1/docs")
