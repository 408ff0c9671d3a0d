"""``manage.py ingest_transcripts PATH... [--adapter claude-code] [--repo DIR] [--seat HANDLE]``."""

from __future__ import annotations

import os
import time

from django.core.management import BaseCommand, CommandError

from crewlet.errors import CrewletError
from learning.management.commands._progress import load_embedder, tqdm_bar
from learning.transcripts.adapters import ADAPTERS
from learning.transcripts.ingest import default_seat, ingest
from learning.transcripts.report import per_file_lines, summary_lines


class _Plain:
    """Progress as plain lines when stdout is not a terminal (logs, CI)."""

    def __init__(self, out, total: int):
        self.out, self.total, self.done = out, total, 0

    def update(self, n: int) -> None:
        self.done += n
        self.out.write(f"read {self.done:,} / {self.total:,} bytes")

    def close(self) -> None:
        pass


def _bytes_under(paths: list[str]) -> int:
    total = 0
    for path in paths:
        if os.path.isdir(path):
            total += sum(os.path.getsize(os.path.join(r, f)) for r, _d, fs in os.walk(path) for f in fs if f.endswith(".jsonl"))
        elif os.path.isfile(path):
            total += os.path.getsize(path)
    return total


class Command(BaseCommand):
    help = "Ingest harness transcripts (files or folders) into candidate shards, the ladder and artifact recommendations."

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", metavar="PATH")
        parser.add_argument("--adapter", default="claude-code", choices=sorted(ADAPTERS))
        parser.add_argument("--repo", default="", metavar="DIR", help="The repository to inventory and draft artifacts against.")
        parser.add_argument("--seat", default="", metavar="HANDLE", help="Whose work the transcripts record (default: the first active seat).")
        parser.add_argument("--per-file", action="store_true", help="Also print, per file, what was read and excluded, its episodes, lessons, ladder outcomes and recommendations.")

    def handle(self, *args, **options):
        from crewlet.models import Seat

        missing = [path for path in options["paths"] if not os.path.exists(path)]
        if missing:
            raise CommandError(f"no such file or folder: {', '.join(missing)}")
        if options["repo"] and not os.path.isdir(options["repo"]):
            raise CommandError(f"--repo {options['repo']}: not a directory")
        try:
            seat = Seat.objects.select_related("role", "company").get(handle=options["seat"]) if options["seat"] else default_seat()
        except Seat.DoesNotExist:
            raise CommandError(f"--seat {options['seat']}: no such seat") from None
        except CrewletError as exc:
            raise CommandError(str(exc)) from None
        if options["seat"]:
            self.stdout.write(f"seat: {seat.handle}")
        else:
            self.stdout.write(f"seat: {seat.handle} (the default, the first active seat; --seat HANDLE files under another)")
        load_embedder(self.stdout)
        total = _bytes_under(options["paths"])
        started = time.monotonic()
        with tqdm_bar(self.stdout, total=total, unit="B", unit_scale=True, desc="transcripts") as progress:
            summary = ingest(paths=options["paths"], seat=seat, adapter=options["adapter"], repo=options["repo"],
                             progress=progress or _Plain(self.stdout, total))
        elapsed = time.monotonic() - started
        rate = summary.bytes_read / 1e6 / elapsed if elapsed > 0 and summary.bytes_read else None
        for line in summary_lines(summary, mb_per_s=rate):
            self.stdout.write(line)
        if options["per_file"]:
            self.stdout.write("\nper file:")
            for line in per_file_lines(summary):
                self.stdout.write(line)
