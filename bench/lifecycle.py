"""Time and peak memory of one episode-lifecycle pass over a seat with 50,000 raw episodes, and of a
clustering pass over 200 turns (when ``learning.passes.clustering`` is in the build).

Runs on a throwaway embedded PostgreSQL; the offline provider answers the compaction summaries and
condensations, so the figures are the pass's own cost (SQL, Python) and not a model's latency. Each
figure is taken under tracemalloc (its peak is the point). Usage: python bench/lifecycle.py [--episodes N]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
import tracemalloc
from datetime import timedelta

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crewlet.settings")
    os.environ.setdefault("CREWLET_LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from crewlet import config
    from crewlet.config import schema

    config.use(schema.Config(providers=schema.Providers(
        llm={"offline": schema.ProviderSpec(kind="offline")},
        embeddings=schema.EmbeddingSpec(kind="hashing", model="hashing-256", dimensions=256),
    )))


def make_seat(handle: str):
    from crewlet.models import Company, Role, Seat, Unit

    company, _ = Company.objects.get_or_create(name="Bench")
    role, _ = Role.objects.get_or_create(company=company, name="swe", defaults={"llm": ["offline"],
                                                                               "llm_auxiliary": ["offline"]})
    unit, _ = Unit.objects.get_or_create(company=company, key="eng", defaults={"name": "Eng"})
    seat, _ = Seat.objects.get_or_create(handle=handle, defaults={"company": company, "role": role, "unit": unit})
    return Seat.objects.select_related("role", "company").get(pk=seat.pk)


TOOLSETS = [("git_clone", "run_tests", "edit_file", "open_pr"), ("kubectl_get", "kubectl_logs", "grafana_query"),
            ("jira_search", "jira_comment"), ("read_file", "grep", "edit_file", "run_tests", "open_pr"), ()]


def seed(seat, n: int, now) -> None:
    """n raw turns over a year: mostly settled tool work, some mid-state rounds and chat-only turns."""
    import random

    from learning.models import Episode

    rng, batch = random.Random(1), []
    for i in range(n):
        ended = now - timedelta(days=rng.uniform(0, 365))
        tools = TOOLSETS[i % len(TOOLSETS)]
        batch.append(Episode(
            seat=seat, run_id=f"bench-{seat.handle}-{i}", task_summary=f"Message from Ana: task {i % 97}",
            ask="Please look at the failing job and fix it." * (1 + i % 3),
            plan_summary=("Traced the failure, fixed the fixture and opened a PR. " * (1 + i % 8)),
            tool_sequence=list(tools), review_outcome="self_iterate" if i % 23 == 0 else ("failed" if i % 7 == 0 else "done"),
            started_at=ended - timedelta(minutes=5), ended_at=ended,
        ))
        if len(batch) == 5000:
            Episode.objects.bulk_create(batch)
            batch = []
    Episode.objects.bulk_create(batch)


def measure(label: str, fn):
    tracemalloc.start()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - started
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{label}: {elapsed:.2f} s, peak Python memory {peak / 1e6:.1f} MB "
          f"(process max RSS {rss_after / 1024:.0f} MB, +{(rss_after - rss_before) / 1024:.0f} MB)")
    return result


def child(episodes: int) -> int:
    setup_django()
    from django.utils import timezone

    from learning.models import Episode
    from learning.passes import lifecycle

    now = timezone.now()
    seat = make_seat("bench-lifecycle")
    Episode.objects.filter(seat=seat).delete()
    t0 = time.perf_counter()
    seed(seat, episodes, now)
    print(f"seeded {episodes} raw episodes in {time.perf_counter() - t0:.1f} s")
    report = measure(f"lifecycle pass over {episodes} raw episodes",
                     lambda: lifecycle.run_lifecycle(seat=seat, now=now))
    print("  " + ", ".join(f"{k}={report[k]}" for k in lifecycle.COUNTS))
    idle = make_seat("bench-idle")
    measure("lifecycle gate for a seat under its threshold", lambda: lifecycle.lifecycle_for_seat(idle, now=now))
    clustering(now)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=50_000)
    parser.add_argument("--child", action="store_true")
    args = parser.parse_args()
    if args.child:
        return child(args.episodes)
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from fresh_db import run_fresh

    print("\n== episode lifecycle", flush=True)
    return run_fresh([os.path.abspath(__file__), "--child", "--episodes", str(args.episodes)],
                     DJANGO_DEBUG="0", PYTHONPATH=ROOT)


def clustering(now) -> None:
    import importlib

    try:
        module = importlib.import_module("learning.passes.clustering")
    except ModuleNotFoundError:
        print("clustering pass: learning.passes.clustering is not in this build; not measured")
        return
    seat = make_seat("bench-clustering")
    seed(seat, 200, now)
    report = measure("clustering pass over 200 turns", lambda: module.run_clustered_synthesis(seat=seat, now=now))
    print(f"  drafted={report.get('drafted')}")


if __name__ == "__main__":
    sys.exit(main())
