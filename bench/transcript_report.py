"""The transcript loop on the dev corpus and on generated 2.x sessions, reported per file.

Reads ``../shared/bench-data/claude-code/`` when it is there (never copied into the repository;
``CREWLET_BENCH_DATA`` names another bench-data folder)
and sessions written by ``bench/claude_sessions.py`` (hundreds of tool calls a turn, failures
recovered from, task notifications, slash commands with arguments, compaction, subagents, the
same causes in several sessions), into a throwaway embedded PostgreSQL, with the offline provider and the
hashing embedder. Prints, per file, what was read, what was excluded by kind, the episodes, the
lessons, the ladder outcomes and the recommendations, then the run's summary.

Run: ``.venv/bin/python bench/transcript_report.py [--sessions 4] [--calls 200]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.claude_sessions import write_session  # noqa: E402
from bench.ingest import setup_django  # noqa: E402

DEV = Path(os.environ.get("CREWLET_BENCH_DATA") or ROOT.parent / "shared" / "bench-data") / "claude-code"


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=4)
    parser.add_argument("--calls", type=int, default=200, help="tool calls a human turn")
    args = parser.parse_args(argv)
    import random

    out = ROOT / "var" / "bench" / "report-sessions"
    shutil.rmtree(out, ignore_errors=True)
    project = out / "-home-jdoe-projects-shop"
    project.mkdir(parents=True)
    rng = random.Random(11)
    for i in range(args.sessions):
        write_session(project, rng, index=i, calls_per_turn=args.calls, secret=i == 1, traps=True)
    seat = setup_django()
    from learning.transcripts.ingest import ingest
    from learning.transcripts.report import per_file_lines, summary_lines

    paths = ([str(DEV)] if DEV.is_dir() else []) + [str(out)]
    print(f"reading: {', '.join(paths)}" + ("" if DEV.is_dir() else "  (no dev corpus beside the repository)"))
    summary = ingest(paths=paths, seat=seat, repo="")
    for line in per_file_lines(summary):
        print(line)
    print("\nsummary:")
    for line in summary_lines(summary):
        print(line)
    from learning.transcripts.models import Shard

    kept = Shard.objects.filter(status__in=[Shard.ACCEPTED, Shard.PUBLISHED]).order_by("pk")
    print(f"\naccepted lessons, in full, as a lead would install them in CLAUDE.md ({kept.count()}):")
    for shard in kept:
        print(f"- {shard.text}")


if __name__ == "__main__":
    main(sys.argv[1:])
