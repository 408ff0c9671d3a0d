"""Transcript ingest throughput: MB/s, per-MB cost from 10 to 50 MB, peak memory.

Generates realistic Claude Code 2.x sessions with ``bench/claude_sessions.py`` (hundreds of tool
calls a human turn, failures recovered from, task notifications, slash commands with arguments,
compaction and subagent files, secrets, the same causes in many sessions) under ``var/bench/``,
then, for each corpus size, in a fresh database and its own process:

1. the adapter alone (parse, classify records, scrub, segment episodes): the reader's own ceiling;
2. the whole loop (``ingest``: store sessions and episodes, extract shards with the offline
   provider, embed with the hashing embedder, climb the ladder, judge, classify, draft), with
   its MB/s, its cost per MB, and the process's peak RSS;
3. a re-ingest of the unchanged corpus (the watermarks hold: nothing new, no model call).

Each figure is printed beside its floor: the whole loop at ``FLOOR_MB_S`` (20 MB/s), and the
per-MB cost at 50 MB against the same run's cost at 10 MB (flat: at most ``FLAT_RATIO`` times).

Run: ``.venv/bin/python bench/ingest.py [--sizes 10,50]``.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "var" / "bench"
sys.path.insert(0, str(ROOT))

FLOOR_MB_S = 20.0
FLAT_RATIO = 1.25


def corpus(mb: float) -> Path:
    """The generated corpus of about ``mb`` MB (made once, reused while its marker is there)."""
    from bench.claude_sessions import write_corpus

    folder = BENCH / f"transcripts-{mb:g}mb"
    marker = folder / ".generated-v2"
    if not marker.exists():
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        write_corpus(folder, mb=mb, seed=7)
        marker.write_text("")
    return folder


def setup_django():
    """Django on ``DATABASE_URL`` (default: a throwaway embedded PostgreSQL, removed when this process
    exits), the offline provider and the hashing embedder; returns the seat transcripts are attributed to."""
    BENCH.mkdir(parents=True, exist_ok=True)
    if "DATABASE_URL" not in os.environ:
        from bench.fresh_db import start_pgserver

        os.environ["DATABASE_URL"] = start_pgserver()[1]
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


def child(folder: str) -> None:
    """One corpus, a fresh database: prints one JSON line of figures."""
    seat = setup_django()
    from core.models import Event
    from learning.transcripts.adapters.claude_code import ClaudeCodeAdapter
    from learning.transcripts.ingest import ingest

    adapter = ClaudeCodeAdapter()
    files = adapter.sources(folder)
    size = sum(os.path.getsize(f) for f in files)
    started, cpu = time.perf_counter(), time.process_time()
    for path in files:
        adapter.read(path, "")
    adapter_s, adapter_cpu = time.perf_counter() - started, time.process_time() - cpu
    base_rss = _rss_mb()
    started, cpu = time.perf_counter(), time.process_time()
    summary = ingest(paths=[folder], seat=seat, repo="")
    loop_s, loop_cpu = time.perf_counter() - started, time.process_time() - cpu
    calls = Event.objects.filter(name="auxiliary_spend").count()
    started = time.perf_counter()
    again = ingest(paths=[folder], seat=seat, repo="")
    reingest_s = time.perf_counter() - started
    print(json.dumps({
        "mb": size / 1e6, "files": len(files),
        "adapter_mb_s": size / 1e6 / adapter_s, "adapter_cpu_mb_s": size / 1e6 / adapter_cpu, "loop_s": loop_s,
        "loop_mb_s": summary.bytes_read / 1e6 / loop_s, "loop_cpu_mb_s": summary.bytes_read / 1e6 / loop_cpu,
        "s_per_mb": loop_s / (summary.bytes_read / 1e6), "cpu_s_per_mb": loop_cpu / (summary.bytes_read / 1e6),
        "load": os.getloadavg()[0], "episodes": summary.episodes, "shards": len(summary.shards),
        "outcomes": dict(summary.outcomes), "recommendations": len(summary.recommendations), "spend_rows": calls,
        "rss_before_loop_mb": base_rss, "peak_rss_mb": _rss_mb(), "reingest_s": reingest_s, "reingest_episodes": again.episodes,
    }), flush=True)


def run(folder: Path) -> dict:
    from bench.fresh_db import start_pgserver

    server, url = start_pgserver()
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="crewlet.settings", DATABASE_URL=url)
    try:
        out = subprocess.run([sys.executable, __file__, "--child", str(folder)], cwd=ROOT, env=env, capture_output=True, text=True)
    finally:
        server.cleanup()
    if out.returncode != 0:
        raise SystemExit(f"{folder.name} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10,50", help="corpus sizes in MB, smallest first")
    parser.add_argument("--child", default="")
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    sizes = [float(s) for s in args.sizes.split(",")]
    folders = {}
    for mb in sizes:
        t0 = time.perf_counter()
        folders[mb] = corpus(mb)
        print(f"corpus {mb:g} MB: {folders[mb]} ({time.perf_counter() - t0:.1f}s to prepare)", flush=True)
    results = []
    for mb in sizes:
        r = run(folders[mb])
        results.append(r)
        verdict = "meets" if r["loop_mb_s"] >= FLOOR_MB_S else "BELOW"
        cpu_verdict = "meets" if r["loop_cpu_mb_s"] >= FLOOR_MB_S else "BELOW"
        print(f"{r['mb']:5.1f} MB ({r['files']} files, load average {r['load']:.1f} on {os.cpu_count()} cores): "
              f"whole loop {r['loop_mb_s']:5.1f} MB/s wall ({verdict} the {FLOOR_MB_S:g} MB/s floor), "
              f"{r['loop_cpu_mb_s']:5.1f} MB/s of this process's CPU ({cpu_verdict}); the adapter alone {r['adapter_mb_s']:.1f} MB/s wall, "
              f"{r['adapter_cpu_mb_s']:.1f} MB/s CPU; {r['s_per_mb'] * 1000:.0f} ms/MB wall, {r['cpu_s_per_mb'] * 1000:.0f} ms/MB CPU, peak RSS {r['peak_rss_mb']:.0f} MB (before the loop {r['rss_before_loop_mb']:.0f} MB); "
              f"{r['episodes']} episodes, {r['shards']} shards, {r['outcomes']}, {r['recommendations']} recommendations, "
              f"{r['spend_rows']} spend rows; re-ingest {r['reingest_s']:.2f}s, {r['reingest_episodes']} new episodes", flush=True)
    if len(results) > 1:
        for key, what in (("s_per_mb", "wall"), ("cpu_s_per_mb", "CPU")):
            ratio = results[-1][key] / results[0][key]
            verdict = "flat" if ratio <= FLAT_RATIO else "NOT flat"
            print(f"per-MB {what} cost {results[-1]['mb']:.0f} MB vs {results[0]['mb']:.0f} MB: x{ratio:.2f} "
                  f"({verdict}: floor x{FLAT_RATIO:g})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
