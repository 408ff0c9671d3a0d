"""Transcript ingest throughput: MB/s and peak memory on a generated 50 MB Claude Code corpus.

Generates ``var/bench/transcripts/`` (about 50 MB of session JSONL: people asking, assistants
calling tools, long tool output, pseudo-user records, corrections, secrets), then measures:

1. the adapter alone (parse, classify records, scrub, segment episodes), streaming file by file;
2. the same pass under tracemalloc, for the Python heap's peak;
3. the whole loop (``ingest``: store, extract shards with the offline provider, embed with the
   hashing embedder, the ladder in SQL, judge, classify, draft) into a fresh SQLite file.

Run: ``.venv/bin/python bench/ingest.py [--mb 50]``. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "var" / "bench"
sys.path.insert(0, str(ROOT))

LESSONS = [
    "tests run with `make test`, never bare pytest.",
    "the staging database is only ever filled from the nightly dump; never seed it by hand.",
    "migration guard: run `python manage.py makemigrations --check` before every commit.",
    "two-engine check: a change is done only when the suite passes on SQLite and on PostgreSQL.",
    "the orders service reads its port from ORDERS_PORT, never from settings.py.",
]
NOISE = "Traceback (most recent call last):\n  File \"/home/dev/acme-api/orders/views.py\", line {n}, in handler\n"


def _session(sid: str, rng: random.Random, target: int) -> str:
    lines, n, size = [], 0, 0

    def add(record):
        nonlocal n, size
        n += 1
        record.update(sessionId=sid, uuid=f"{sid}-{n}", timestamp=f"2025-05-01T10:{n // 3600 % 60:02d}:{n % 60:02d}Z", cwd="/home/dev/acme-api")
        line = json.dumps(record)
        lines.append(line)
        size += len(line) + 1

    while size < target:
        add({"type": "user", "message": {"role": "user", "content": f"Task {n}: add field {rng.randrange(1000)} to orders."}})
        add({"type": "user", "isMeta": True, "message": {"role": "user", "content": "<system-reminder>todo list</system-reminder>"}})
        for k in range(rng.randrange(2, 6)):
            tid = f"t{n}-{k}"
            add({"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "text", "text": "Running the check."},
                {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": rng.choice(["pytest", "make test", "git push", "ls"])}}]}})
            output = "".join(NOISE.format(n=i) for i in range(rng.randrange(10, 60)))
            if rng.random() < 0.05:
                output += "OPENAI_API_KEY=sk-proj-" + "".join(rng.choice("abcdefghijk0123456789") for _ in range(40))
            add({"type": "user", "toolUseResult": {}, "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": tid, "content": output, "is_error": rng.random() < 0.3}]}})
        if rng.random() < 0.4:
            add({"type": "user", "message": {"role": "user", "content": "No, " + rng.choice(LESSONS)}})
    return "\n".join(lines) + "\n"


def generate(mb: float) -> list[Path]:
    folder = BENCH / "transcripts" / "-home-dev-acme-api"
    marker = BENCH / "transcripts" / f".generated-{mb}"
    files = sorted(folder.glob("*.jsonl"))
    if marker.exists() and files:
        return files
    folder.mkdir(parents=True, exist_ok=True)
    for old in files:
        old.unlink()
    rng, total, i = random.Random(7), int(mb * 1_000_000), 0
    while total > 0:
        text = _session(f"bench-{i:04d}", rng, min(total, 250_000))
        (folder / f"bench-{i:04d}.jsonl").write_text(text)
        total -= len(text.encode())
        i += 1
    marker.write_text("")
    return sorted(folder.glob("*.jsonl"))


def setup_django(name: str = "ingest.sqlite3"):
    """A fresh SQLite database under var/bench, the offline provider and the hashing embedder; returns the seat."""
    BENCH.mkdir(parents=True, exist_ok=True)
    db = BENCH / name
    if db.exists():
        db.unlink()
    os.environ["DATABASE_URL"] = f"sqlite:///{db}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crewlet.settings")
    os.environ["CREWLET_CONFIG"] = str(BENCH / "no-config.toml")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from crewlet import config
    from crewlet.config import schema

    config.use(schema.Config(providers=schema.Providers(embeddings=schema.EmbeddingSpec(kind="hashing", model="hashing-256", dimensions=256))))
    from crewlet.models import Company, Role, Seat

    company = Company.objects.create(name="Bench")
    role = Role.objects.create(company=company, name="swe", llm=["offline"], llm_auxiliary=["offline"])
    return Seat.objects.create(company=company, role=role, handle="bench")


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kilobytes


def adapter_pass(files) -> tuple[float, int, int, int]:
    from learning.transcripts.adapters.claude_code import ClaudeCodeAdapter

    adapter, nbytes, episodes, warnings = ClaudeCodeAdapter(), 0, 0, 0
    started = time.perf_counter()
    for path in files:
        result = adapter.read(str(path), "")
        nbytes += result.bytes_read
        episodes += len(result.episodes)
        warnings += len(result.warnings)
    return time.perf_counter() - started, nbytes, episodes, warnings


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=50.0)
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    files = generate(args.mb)
    size = sum(p.stat().st_size for p in files)
    print(f"corpus: {len(files)} session files, {size / 1e6:.1f} MB under {files[0].parent} ({time.perf_counter() - t0:.1f}s to prepare)")
    seat = setup_django()
    base_rss = _rss_mb()

    elapsed, nbytes, episodes, _w = adapter_pass(files)
    print(f"adapter only:  {nbytes / 1e6 / elapsed:6.1f} MB/s   ({nbytes / 1e6:.1f} MB in {elapsed:.2f}s, {episodes} episodes)   "
          f"peak RSS {_rss_mb():.0f} MB (process baseline {base_rss:.0f} MB)")

    tracemalloc.start()
    adapter_pass(files[: max(1, len(files) // 5)])
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"adapter heap:  peak {peak / 1e6:.1f} MB of Python allocations while streaming (tracemalloc, a fifth of the corpus)")

    from learning.transcripts.ingest import ingest

    started = time.perf_counter()
    summary = ingest(paths=[str(files[0].parent)], seat=seat, repo="")
    elapsed = time.perf_counter() - started
    print(f"whole loop:    {summary.bytes_read / 1e6 / elapsed:6.1f} MB/s   ({elapsed:.1f}s; {summary.episodes} episodes, "
          f"{len(summary.shards)} shards, outcomes {dict(summary.outcomes)}, {len(summary.recommendations)} recommendations, "
          f"redactions {dict(summary.scrubbed)})   peak RSS {_rss_mb():.0f} MB")
    started = time.perf_counter()
    again = ingest(paths=[str(files[0].parent)], seat=seat, repo="")
    print(f"re-ingest:     {time.perf_counter() - started:.2f}s, {again.episodes} new episodes (watermarks hold)")


if __name__ == "__main__":
    main(sys.argv[1:])
