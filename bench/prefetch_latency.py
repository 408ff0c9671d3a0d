"""Prefetch latency: p50 / p95 of one turn start, offline provider, on a throwaway embedded PostgreSQL.

Twenty seats, each with 500 diary notes, 5,000 episodes and 50 synthesized skills. Vectors come
from the hashing embedder (256 dimensions) for seeding speed, not the packaged sentence model: the
rows' texts are drawn from 5,500 distinct generated texts, embedded once and shared by the seats
(every seat still holds its own rows, so every recall scans and ranks its own 5,000 + 500 vectors
in SQL). Timed: rich triggers (embed + memory filter + episode recall + knowledge gate + skills)
and thin triggers (the gate path), each a fresh run id, rotating over the seats, as the API serves
them: what is timed is what the runtime waits for, the response (the frozen prefix and the turn
start's bookkeeping are committed before it).

Each figure is printed beside the floor measured in the same run, turn by turn (before the rich turn
start on every other turn, after it on the rest: ``measure``): the ask's embed
plus four raw SELECTs on the driver's own connection (the seat's top-50 notes and top-3 episodes
by cosine distance, read through the same index as the product's, its 50 most recent notes, its skill
catalogue); the ask's embed is also timed alone,
the part of the floor no query can save. Run with the hashing embedder
and with the real one (all-MiniLM-L6-v2 in numpy; the seeded rows then carry its vectors, computed
once and cached under var/bench/). One rich turn start, outside the timed ones, is counted:
its statements and its commits. Twenty more rich turn starts, timed apart, show where one goes: the
hybrid recall statements (``core.hybrid``), the other statements, the commit, and the rest (Python,
the embed). Last, the CPU
of twenty more rich turn starts and twenty more floors, each loop alone (this process's, every thread,
and the database server's): on 2 cores a turn start that needs more than twice the floor's CPU
cannot be within 2x of its wall time; and the load average.

Usage: python bench/prefetch_latency.py [--embedder hashing|local|both] [--turns N]
"""

from __future__ import annotations

import argparse
import os
import shutil
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


def _vectors(embedder, texts: list[str], name: str) -> list:
    """The texts' vectors; the real model's are computed once and cached (they take a minute)."""
    if embedder.model.startswith("hashing"):
        return embedder.embed_batch(texts)
    import numpy as np

    path = os.path.join(ROOT, "var", "bench", f"prefetch-{name}-{embedder.model}.npy")
    if os.path.exists(path):
        cached = np.load(path)
        if len(cached) == len(texts):
            return cached.tolist()
    vectors = []
    for start in range(0, len(texts), 256):
        vectors.extend(embedder.embed_batch(texts[start : start + 256]))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.save(path, np.asarray(vectors, dtype=np.float32))
    return vectors


def seed() -> list:
    from django.utils import timezone

    from core.providers.embeddings import get_embedder
    from crewlet.models import Company, Role, Seat, Unit
    from learning.models import DiaryEntry, Episode, SynthesizedSkill

    embedder = get_embedder()
    started = time.monotonic()
    note_texts = [_text(i, "note") for i in range(NOTES)]
    ep_texts = [_text(i, "episode") for i in range(EPISODES)]
    note_vecs, ep_vecs = _vectors(embedder, note_texts, "notes"), _vectors(embedder, ep_texts, "episodes")
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


# the nearest rows as the product's searches read them: the distance written against the column cast to
# the query's width, among rows of that width (``core.vectors.distance_sql``), so the episodes' approximate
# index serves the ordering
FLOOR_SQL = {
    "notes": "SELECT t.id, {d} AS d FROM agent_diary t WHERE t.seat_id = %s AND t.embedding_model = %s"
    " AND t.embedding_dim = {dim} ORDER BY d, t.id DESC LIMIT 50",
    "episodes": "SELECT t.id, {d} AS d FROM episodes t WHERE t.seat_id = %s AND t.kind = 'raw'"
    " AND t.embedding_model = %s AND t.embedding_dim = {dim} ORDER BY d, t.id DESC LIMIT 3",
}
RECENT_SQL = "SELECT id, content FROM agent_diary WHERE seat_id = %s ORDER BY created_at DESC, id DESC LIMIT 50"
SKILLS_SQL = "SELECT id, name, description, state FROM synthesized_skills WHERE seat_id = %s ORDER BY name"


def floor_turn(seat, ask: str) -> None:
    """The floor of a rich turn start: the ask's embed and four raw SELECTs, nothing else."""
    from django.db import connection
    from pgvector import Vector

    from core.providers.embeddings import embed_one
    from core.vectors import distance_sql

    result = embed_one(ask, budget=None)
    raw, query, dim = connection.connection, Vector(result.vector), len(result.vector)
    for name in ("notes", "episodes"):
        sql = FLOOR_SQL[name].format(d=distance_sql("t", dim), dim=dim)
        raw.execute(sql, [query, seat.id, result.model]).fetchall()
    raw.execute(RECENT_SQL, [seat.id]).fetchall()
    raw.execute(SKILLS_SQL, [seat.id]).fetchall()


class Statements:
    """Statements and commits on the default connection: an atomic block's commit, and each write made
    in autocommit (its own commit)."""

    WRITES = ("INSERT", "UPDATE", "DELETE")

    def __init__(self):
        from django.db import connections

        self.connection = connections["default"]
        self.statements = self.commits = 0
        self._commit = self.connection.commit

    def __enter__(self):
        def commit():
            self.commits += 1
            return self._commit()

        self.connection.commit = commit
        self._watching = self.connection.execute_wrapper(self._count)
        self._watching.__enter__()
        return self

    def __exit__(self, *exc):
        self._watching.__exit__(*exc)
        self.connection.commit = self._commit

    def _count(self, execute, sql, params, many, context):
        self.statements += 1
        if not self.connection.in_atomic_block and sql.lstrip().upper().startswith(self.WRITES):
            self.commits += 1
        return execute(sql, params, many, context)


class Breakdown:
    """Where the time of the turn starts run under it goes: the hybrid recall statements (``core.hybrid``,
    a search's ranking by meaning, ``<=>``, and by words, ``WITH stats AS``), every other statement, and the commit."""

    def __init__(self):
        from django.db import connections

        self.connection = connections["default"]
        self.hybrid = self.other = self.commit = 0.0
        self._commit = self.connection.commit

    def __enter__(self):
        def commit():
            started = time.perf_counter()
            try:
                return self._commit()
            finally:
                self.commit += (time.perf_counter() - started) * 1000

        self.connection.commit = commit
        self._watching = self.connection.execute_wrapper(self._time)
        self._watching.__enter__()
        return self

    def __exit__(self, *exc):
        self._watching.__exit__(*exc)
        self.connection.commit = self._commit

    def _time(self, execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            elapsed = (time.perf_counter() - started) * 1000
            if "<=>" in sql or sql.lstrip().startswith("WITH stats AS"):
                self.hybrid += elapsed
            else:
                self.other += elapsed


def request_for(i: int, kind: str):
    """The i-th turn's trigger: ``rich`` (an ask naming a topic) or ``thin`` (a pointer)."""
    import uuid

    from learning.intake.record import Interaction, Sender
    from learning.prefetch import PrefetchRequest

    topic = TOPICS[(i * 5) % len(TOPICS)]
    return PrefetchRequest(
        run_id=f"bench-{uuid.uuid4().hex}", requires_recon=(kind == "thin"),
        ask=f"The {topic} broke again overnight; can you {VERBS[i % 8]} it and tell Ravi?" if kind == "rich" else "+1",
        interactions=(Interaction(sender=Sender(handle="ravi", platform="mattermost", display_name="Ravi"), body="x"),),
        conversation_id=f"conv-{i}")


def breakdown(seats, turns: int) -> dict:
    """Rich turn starts run apart from the timed ones, each under a ``Breakdown``: per-turn medians."""
    from learning.prefetch import prefetch

    parts: dict[str, list[float]] = {"total": [], "hybrid": [], "other": [], "commit": []}
    for i in range(turns):
        with Breakdown() as b:
            started = time.perf_counter()
            prefetch(seat=seats[i % len(seats)], request=request_for(1000 + i, "rich"))
            parts["total"].append((time.perf_counter() - started) * 1000)
        parts["hybrid"].append(b.hybrid)
        parts["other"].append(b.other)
        parts["commit"].append(b.commit)
    return {k: statistics.median(v) for k, v in parts.items()}


def embed_alone(turns: int) -> float:
    """The median time of the rich asks' embeds alone (``embed_one``, as the turn start sends it)."""
    from core.providers.embeddings import embed_one

    spent = []
    for i in range(turns):
        ask = request_for(3000 + i, "rich").ask
        started = time.perf_counter()
        embed_one(ask, budget=None)
        spent.append((time.perf_counter() - started) * 1000)
    return statistics.median(spent)


def _server_cpu() -> dict[int, float]:
    """Seconds of CPU each of PostgreSQL's client backends has spent (the request's connection, kept open
    by ``CONN_MAX_AGE``), not its background processes (the WAL writer, autovacuum's
    workers, which would charge one loop with what the writes of the one before left them), by pid. The
    throwaway server serves this bench alone."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend'")
        backends = [pid for (pid,) in cursor.fetchall()]
    out = {}
    for pid in backends:
        try:
            with open(f"/proc/{pid}/stat") as stat_file:
                fields = stat_file.read().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        out[pid] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
    return out


def cpu_per_turn(seats, turns: int) -> dict:
    """CPU a rich turn start costs, and the floor's: the bench process's (every thread: the request's, the
    side readers', the embed's) and the database server's, each
    loop of ``turns`` run alone. On 2 cores a turn start cannot take less wall time than half its CPU."""
    from learning.prefetch import prefetch

    out: dict[str, tuple[float, float]] = {}
    for kind in ("rich", "floor"):
        process, server = time.process_time(), _server_cpu()
        for i in range(turns):
            request = request_for(2000 + i, "rich")
            if kind == "rich":
                prefetch(seat=seats[i % len(seats)], request=request)
            else:
                floor_turn(seats[i % len(seats)], request.ask)
        spent = sum(seconds - server.get(pid, 0.0) for pid, seconds in _server_cpu().items())  # a new backend: all of it
        out[kind] = ((time.process_time() - process) * 1000 / turns, spent * 1000 / turns)
    return out


def measure(seats, turns: int) -> dict:
    """Each turn: a rich turn start, a thin one and the floor, on one seat. The floor runs after the rich turn
    start on even turns and before it on odd ones, so each finds the seat's rows as warm as the other does:
    the seats' rows outgrow PostgreSQL's buffers (the bench prints both sizes), and whichever reads a seat
    second finds its pages there."""
    from learning.prefetch import prefetch

    out = {"rich": [], "thin": [], "floor": [], "rich_statements": [], "rich_commits": []}

    def timed(kind: str, warm: bool, run, *args, **kwargs) -> None:
        started = time.perf_counter()
        run(*args, **kwargs)
        if warm:  # the first rounds warm caches and connections
            out[kind].append((time.perf_counter() - started) * 1000)

    for i in range(turns + 3):
        seat, warm = seats[i % len(seats)], i >= 3
        rich, thin = request_for(i, "rich"), request_for(i, "thin")
        floor_first = i % 2 == 1
        if floor_first:
            timed("floor", warm, floor_turn, seat, rich.ask)
        if i == 3:  # one counted turn start, outside the timed ones
            with Statements() as counted:
                prefetch(seat=seat, request=rich)
            out["rich_statements"].append(counted.statements)
            out["rich_commits"].append(counted.commits)
        else:
            timed("rich", warm, prefetch, seat=seat, request=rich)
        timed("thin", warm, prefetch, seat=seat, request=thin)
        if not floor_first:
            timed("floor", warm, floor_turn, seat, rich.ask)
    return out


def child(turns: int, embedder: str) -> None:
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from crewlet import config
    from crewlet.config import schema

    spec = (schema.EmbeddingSpec(kind="hashing", model="hashing-256", dimensions=256) if embedder == "hashing"
            else schema.EmbeddingSpec(kind="local"))
    config.use(schema.Config(providers=schema.Providers(llm={"offline": schema.ProviderSpec(kind="offline")},
                                                        embeddings=spec)))
    call_command("migrate", verbosity=0)
    seats = seed()
    # the seeded rows settled as a running database's are: otherwise autovacuum works through the bulk load
    # inside the timed turns, and index-only reads visit the heap until it has
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
        # every search reads all of a seat's rows: whether they fit the server's buffers shows in every figure
        cursor.execute("SELECT current_setting('shared_buffers'), pg_total_relation_size('episodes') / 1048576,"
                       " pg_total_relation_size('episode_pieces') / 1048576")
        buffers, episodes_mb, pieces_mb = cursor.fetchone()
    print(f"   shared_buffers {buffers}; episodes {episodes_mb} MB, their pieces {pieces_mb} MB (with indexes)",
          flush=True)
    times = measure(seats, turns)
    print(f"   embedder: {embedder}", flush=True)
    floor = statistics.median(times["floor"])
    for kind, label in (("rich", "rich trigger"), ("thin", "thin trigger"), ("floor", "floor (embed + 4 raw SELECTs)")):
        values = times[kind]
        q = statistics.quantiles(values, n=20)
        ratio = f"   {statistics.median(values) / floor:.1f}x the floor" if kind != "floor" else ""
        print(f"   {label:<30} p50 {statistics.median(values):7.1f} ms   p95 {q[18]:7.1f} ms   (n={len(values)}){ratio}",
              flush=True)
    print(f"   the ask's embed alone        p50 {embed_alone(20):7.1f} ms   (the floor's first part)", flush=True)
    print(f"   one rich turn start: {times['rich_statements'][0]} statements, {times['rich_commits'][0]} commit(s)"
          " (the floor: 4 statements, no commit)", flush=True)
    parts = breakdown(seats, 20)
    rest = parts["total"] - parts["hybrid"] - parts["other"] - parts["commit"]
    print(f"   where a rich turn start goes (20 more, medians): total {parts['total']:.1f} ms = hybrid recall statements "
          f"{parts['hybrid']:.1f} ({parts['hybrid'] / parts['total']:.0%}) + other statements {parts['other']:.1f}"
          f" + commit {parts['commit']:.1f} + the rest (Python, the embed) {rest:.1f}", flush=True)
    cpu = cpu_per_turn(seats, 20)
    (rich_p, rich_s), (floor_p, floor_s) = cpu["rich"], cpu["floor"]
    print(f"   CPU a turn start (20 more each, alone): rich {rich_p + rich_s:.1f} ms = this process {rich_p:.1f}"
          f" + database server {rich_s:.1f}; floor {floor_p + floor_s:.1f} ms = {floor_p:.1f} + database server {floor_s:.1f}"
          f" -> {(rich_p + rich_s) / (floor_p + floor_s):.1f}x the floor's CPU", flush=True)
    print("   load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()), flush=True)


def run(turns: int, embedder: str) -> int:
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from fresh_db import start_pgserver

    # production settings: DEBUG's cursor wrapper would log and re-quote every statement
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="crewlet.settings", BENCH_CHILD="1", DJANGO_DEBUG="0")
    tmp = tempfile.mkdtemp(prefix="crewlet-bench-")
    env["CREWLET_VAR_DIR"] = tmp
    server, env["DATABASE_URL"] = start_pgserver()
    print(f"\n== prefetch latency, {embedder} embedder", flush=True)
    try:
        return subprocess.call([sys.executable, __file__, "--child", str(turns), embedder], cwd=ROOT, env=env)
    finally:
        server.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        child(int(argv[1]), argv[2])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", default="both", choices=["hashing", "local", "both"])
    parser.add_argument("--turns", type=int, default=60)
    args = parser.parse_args(argv)
    embedders = ["hashing", "local"] if args.embedder == "both" else [args.embedder]
    return max(run(args.turns, m) for m in embedders)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
