"""Apply a crewlet.toml: validate, upsert the organisation, record a revision (naming this command and its OS
user) when the text is new, print what changed."""

import sys
from pathlib import Path

from django.core.management import BaseCommand, CommandError

from crewlet import config


class Command(BaseCommand):
    help = "Validate and apply a crewlet.toml; an invalid file is refused naming the key path, and nothing changes."
    requires_system_checks: list[str] = []  # it applies a file even while the served one is refused

    def add_arguments(self, parser):
        parser.add_argument("path", help="the TOML file to apply")

    def handle(self, *args, path, **options):
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise CommandError(f"{path}: cannot read ({exc.strerror or exc})") from exc
        try:
            revision = config.apply_text(text, path=str(Path(path).resolve()))  # attributed to this command's user
        except config.ConfigError as exc:
            for problem in exc.problems:  # one line per refused key, like a compiler's
                self.stderr.write(f"{path}: {problem}")
            sys.exit(1)
        summary = revision.summary
        self.stdout.write(f"applied {path}")
        self.stdout.write(f"  company: {summary['company']}")
        self.stdout.write(f"  units:   {', '.join(summary['units']) or '-'}")
        self.stdout.write(f"  roles:   {', '.join(summary['roles']) or '-'}")
        self.stdout.write(f"  seats:   {', '.join(summary['seats']) or '-'}")
        self.stdout.write(f"  new seats: {', '.join(summary['seats_created']) or '-'}")
        self.stdout.write(self.style.SUCCESS(f"revision {revision.sha256}"))
