"""Turns reflected per second with the offline provider, on SQLite and on PostgreSQL, and peak memory.

Usage: python bench/reflect_throughput.py [--engine sqlite|postgres|both] [--turns N] [--threads T]

Each engine runs in its own process (settings bind the database at import) on a throwaway
database: migrate, three seats, N stored turns of a realistic mix (stated preferences, dated
situations, a repeated five-tool procedure, skipped turns), then every turn reflected through
``learning.tasks.reflect_turn`` sequentially and again from T threads. Embeddings use the hashing
embedder so the figure is the loop's own cost, not a model's. ``CREWLET_BENCH_WAL=1`` runs SQLite
in WAL mode (the default journal pays an fsync per commit, which dominates). Prints figures;
asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

PROCEDURE = ["jira_get_issue", "git_checkout", "git_create_branch", "run_tests", "jira_transition"]


def _record(n: int, seat: str) -> dict:
    base = {
        "run_id": f"bench-{n}", "work_key": f"chat:bench-{n}", "seat": seat, "conversation_id": f"chat:C{n % 11}",
        "conversation_kind": "chat", "label": "Message from Maya: Slack message", "subject_is_label": True,
        "plan_summary": "Replied in the thread.", "tool_sequence": ["mattermost_post_message"],
        "tools_called": ["mattermost_post_message"], "review_outcome": "done", "skills_offered": [],
        "interactions": [{"sender": {"handle": "maya", "platform": "mattermost", "display_name": "Maya", "kind": "human"},
                          "body": f"I prefer short status updates for stream {n % 13}."}],
    }
    kind = n % 4
    if kind == 1:
        base.update(tool_sequence=PROCEDURE, tools_called=PROCEDURE + ["run_tests"] * 5,
                    interactions=[{**base["interactions"][0], "body": "Cut the release branch and run the checklist."}])
    elif kind == 2:
        base["interactions"][0]["body"] = f"I'm out of office until Friday; Ravi covers item {n}."
    elif kind == 3:
        base.update(review_outcome="skipped", tool_sequence=[], tools_called=[])
    return base


def child(turns: int, threads: int) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crewlet.settings")
    import django

    django.setup()
    if os.environ.get("CREWLET_BENCH_WAL") == "1":
        from django.db.backends.signals import connection_created

        def wal(sender, connection, **kwargs):
            if connection.vendor == "sqlite":
                with connection.cursor() as cursor:
                    cursor.execute("PRAGMA journal_mode=WAL")
                    cursor.execute("PRAGMA synchronous=NORMAL")

        connection_created.connect(wal)
    from django.core.management import call_command
    from django.db import connection, connections

    from crewlet import config
    from crewlet.config import schema
    from crewlet.models import Company, Role, Seat, Unit
    from learning.models import Turn
    from learning.reflect.ring import RING
    from learning.tasks import reflect_turn

    call_command("migrate", verbosity=0)
    config.use(schema.Config(providers=schema.Providers(
        llm={"offline": schema.ProviderSpec(kind="offline")},
        embeddings=schema.EmbeddingSpec(kind="hashing", model="hashing-256", dimensions=256),
    )))
    company = Company.objects.create(name="Bench")
    role = Role.objects.create(company=company, name="swe", llm=["offline"], llm_auxiliary=["offline"])
    unit = Unit.objects.create(company=company, key="eng", name="Eng")
    seats = [Seat.objects.create(company=company, role=role, unit=unit, handle=h) for h in ("ana", "bo", "cy")]

    def store(prefix: str) -> list[int]:
        ids = []
        for n in range(turns):
            rec = _record(n, seats[n % 3].handle)
            rec["run_id"] = f"{prefix}-{rec['run_id']}"
            turn = Turn.objects.create(run_id=rec["run_id"], work_key=f"{prefix}-{rec['work_key']}", seat=seats[n % 3],
                                       conversation_id=rec["conversation_id"], conversation_kind="chat",
                                       review_outcome=rec["review_outcome"], payload=rec)
            ids.append(turn.pk)
        return ids

    tracemalloc.start()
    ids = store("seq")
    started = time.perf_counter()
    for turn_id in ids:
        reflect_turn(turn_id)
    sequential = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    RING.clear()
    ids = store("par")
    chunks = [ids[i::threads] for i in range(threads)]

    def work(chunk):
        try:
            for turn_id in chunk:
                reflect_turn(turn_id)
        finally:
            connections.close_all()

    started = time.perf_counter()
    pool = [threading.Thread(target=work, args=(c,)) for c in chunks]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    parallel = time.perf_counter() - started
    unreflected = Turn.objects.filter(reflected_at__isnull=True).count()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    journal = " (WAL, synchronous=NORMAL)" if os.environ.get("CREWLET_BENCH_WAL") == "1" and connection.vendor == "sqlite" else ""
    print(f"engine {connection.vendor}{journal}: {turns} turns")
    print(f"  sequential: {turns / sequential:7.1f} turns/s ({sequential * 1000 / turns:.1f} ms a turn)")
    print(f"  {threads} threads:  {turns / parallel:7.1f} turns/s (3 seats, passes for one seat serialised)")
    print(f"  peak traced Python memory during the sequential run: {peak / 1e6:.1f} MB; process max RSS {rss_mb:.0f} MB")
    print(f"  turns left unreflected: {unreflected}")


def run_engine(engine: str, turns: int, threads: int) -> int:
    env = dict(os.environ, CREWLET_BENCH_CHILD="1", DJANGO_SETTINGS_MODULE="crewlet.settings")
    server = None
    tmp = tempfile.mkdtemp(prefix="crewlet-bench-")
    if engine == "sqlite":
        env["DATABASE_URL"] = f"sqlite:///{tmp}/bench.sqlite3"
    else:
        from bin.test_engines import start_pgserver

        server, env["DATABASE_URL"] = start_pgserver()
    try:
        return subprocess.call([sys.executable, __file__, "--child", "--turns", str(turns), "--threads", str(threads)],
                               cwd=ROOT, env=env)
    finally:
        if server is not None:
            server.cleanup()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--engine", default="both", choices=["sqlite", "postgres", "both"])
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--child", action="store_true")
    args = parser.parse_args()
    if args.child:
        child(args.turns, args.threads)
        return 0
    engines = ["sqlite", "postgres"] if args.engine == "both" else [args.engine]
    return max(run_engine(e, args.turns, args.threads) for e in engines)


if __name__ == "__main__":
    sys.exit(main())
