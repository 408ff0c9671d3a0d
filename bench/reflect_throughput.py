"""Turns reflected per second with the offline provider, and peak memory.

Usage: python bench/reflect_throughput.py [--turns N] [--threads T]

The bench runs in a child process on a throwaway embedded PostgreSQL: migrate, three seats, N stored turns of a realistic mix (stated preferences, dated
situations, a repeated five-tool procedure, skipped turns), then every turn reflected through
``learning.reflection.tasks.reflect_turn`` sequentially, again from T threads of one process, and again from
2 processes taking the turns' tasks from one queue in order, as the queue's 2 worker processes do (threads
share one interpreter; the queue's workers do not). Embeddings use the hashing
embedder so the figure is the loop's own cost, not a model's. The CPU a turn costs (this process's,
and its database backend's, read from /proc) is printed beside both: on a shared machine it moves
far less than the wall time. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import resource
import sys
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


def _counting(connection):
    """A statement counter and a commit counter on ``connection`` (the calling thread's): returns
    ``(counts, stop)``. A write outside any atomic block is its own transaction and counted as one."""
    counts = {"statements": 0, "transactions": 0}
    shapes: collections.Counter = collections.Counter()
    counts["shapes"] = shapes  # type: ignore[assignment]

    def wrapper(execute, sql, params, many, context):
        counts["statements"] += 1
        shapes[re.sub(r'"s\d+_x\d+"', '"sp"', " ".join(sql.split()))[:110]] += 1  # savepoints by kind, not name
        if not connection.in_atomic_block and sql.lstrip()[:6].upper() in ("INSERT", "UPDATE", "DELETE"):
            counts["transactions"] += 1
        return execute(sql, params, many, context)

    real_commit = connection.commit

    def commit():
        counts["transactions"] += 1
        return real_commit()

    connection.commit = commit
    handle = connection.execute_wrapper(wrapper)
    handle.__enter__()

    def stop():
        handle.__exit__(None, None, None)
        del connection.commit

    return counts, stop


def _server_cpu(connection) -> float | None:
    """Seconds of CPU this connection's PostgreSQL backend has used (a local server: its /proc
    entry), or None (a remote server's is not readable)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _CPU:
    """CPU time over a block, this process's and its database backend's: a figure the other work on a
    shared machine disturbs far less than wall time does."""

    def __init__(self, connection):
        self.connection = connection

    def __enter__(self):
        self.server, self.client = _server_cpu(self.connection), time.process_time()
        return self

    def __exit__(self, *exc):
        self.client = time.process_time() - self.client
        end = _server_cpu(self.connection)
        self.server = end - self.server if end is not None and self.server is not None else None

    def line(self, turns: int) -> str:
        client = self.client * 1000 / turns
        if self.server is None:
            return f"client {client:.1f} ms"
        server = self.server * 1000 / turns
        return f"client {client:.1f} ms + server {server:.1f} ms = {client + server:.1f} ms"


def _floor_rows(turn_ids):
    """What the reflection of each turn wrote, cloned so it can be written again: per turn, the
    inserts by model (new run ids and names) and the rows it updated (profiles, budget counters)."""
    from core.models import BudgetCounter, Event
    from learning.models import CounterpartyProfile, DiaryEntry, Episode, EpisodePiece, SynthesizedSkill, Turn

    plans = []
    for turn in Turn.objects.filter(pk__in=turn_ids).order_by("id"):
        run = turn.run_id
        episode = Episode.objects.filter(seat_id=turn.seat_id, run_id=run).first()
        pieces = list(EpisodePiece.objects.filter(episode=episode)) if episode else []
        rows = {"events": list(Event.objects.filter(turn_id=run)), "diary": list(DiaryEntry.objects.filter(turn_id=run)),
                "skills": list(SynthesizedSkill.objects.filter(origin_turn_id=run))}
        for obj in [*rows["events"], *rows["diary"], *rows["skills"], *pieces]:
            obj.pk = None
        for skill in rows["skills"]:
            skill.name = f"{skill.name} (floor)"
        if episode is not None:
            episode.pk, episode.run_id = None, f"floor-{run}"
        profiles = [e.payload["profile_id"] for e in rows["events"] if e.name == "counterparty_profile_updated"]
        counters = list(BudgetCounter.objects.filter(scope="seat", scope_id=turn.seat_id).values_list("pk", flat=True))
        counters += list(BudgetCounter.objects.filter(scope="company").values_list("pk", flat=True))
        plans.append((turn.pk, episode, pieces, rows, profiles, counters if rows["events"] else []))
    return plans, (CounterpartyProfile, BudgetCounter, DiaryEntry, Episode, EpisodePiece, SynthesizedSkill, Turn, Event)


def _write_floor(plans, models, *, deferred: bool = False) -> float:
    """The floor: each turn's rows written again, one transaction a turn, one statement a table
    (``deferred``: flushed to disk once every 20 turns, as a drain does, instead of at every commit)."""
    from django.db import transaction
    from django.db.models import F
    from django.utils import timezone

    from learning.reflection import durability

    CounterpartyProfile, BudgetCounter, DiaryEntry, Episode, EpisodePiece, SynthesizedSkill, Turn, Event = models
    started = time.perf_counter()
    for i, (turn_id, episode, pieces, rows, profiles, counters) in enumerate(plans):
        if deferred and i % 20 == 0:
            flush = durability.deferred(turn_id)
            flush.__enter__()
        with transaction.atomic():
            if episode is not None:
                episode.save(force_insert=True)
                for piece in pieces:
                    piece.episode_id = episode.pk
                EpisodePiece.objects.bulk_create(pieces)
            DiaryEntry.objects.bulk_create(rows["diary"])
            SynthesizedSkill.objects.bulk_create(rows["skills"])
            Event.objects.bulk_create(rows["events"])
            if profiles:
                CounterpartyProfile.objects.filter(pk__in=profiles).update(observations=F("observations") + 1)
            if counters:
                BudgetCounter.objects.filter(pk__in=counters).update(tokens=F("tokens") + 1)
            Turn.objects.filter(pk=turn_id).update(reflected_at=timezone.now())
        if deferred and (i % 20 == 19 or i == len(plans) - 1):
            flush.__exit__(None, None, None)
    return time.perf_counter() - started


PROCESSES = 2  # the queue's default workers (Q_CLUSTER in crewlet/settings.py)


def _use_offline_config() -> None:
    """The bench's providers: the offline model and the hashing embedder (the loop's own cost, not a model's)."""
    from crewlet import config
    from crewlet.config import schema

    config.use(schema.Config(providers=schema.Providers(
        llm={"offline": schema.ProviderSpec(kind="offline")},
        embeddings=schema.EmbeddingSpec(kind="hashing", model="hashing-256", dimensions=256),
    )))


def _take(tasks, ready, done) -> None:
    """One worker process (started fresh, as the queue's are): reflect the turn of each task it takes
    until the queue says stop."""
    import django

    django.setup()
    import logging

    logging.getLogger("learning.reflection").setLevel(logging.WARNING)
    from django.db import connection, connections

    from learning.reflection.tasks import reflect_turn

    _use_offline_config()
    connection.ensure_connection()
    ready.put(True)
    try:
        while (turn_id := tasks.get()) is not None:
            reflect_turn(turn_id)
    finally:
        connections.close_all()
        done.put(time.perf_counter())


def _processes(ids: list[int]) -> float:
    """Turns a second reflected by ``PROCESSES`` processes sharing one queue of tasks, in order; timed from
    when every process is ready to when the last one is done."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    tasks, ready, done = ctx.Queue(), ctx.Queue(), ctx.Queue()
    workers = [ctx.Process(target=_take, args=(tasks, ready, done)) for _ in range(PROCESSES)]
    for w in workers:
        w.start()
    for _ in workers:
        ready.get()
    started = time.perf_counter()
    for turn_id in ids:
        tasks.put(turn_id)
    for _ in range(PROCESSES):
        tasks.put(None)
    finished = max(done.get(timeout=600) for _ in workers)  # a worker that died raises queue.Empty here
    for w in workers:
        w.join()
    return len(ids) / (finished - started)


def child(turns: int, threads: int) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crewlet.settings")
    import django

    django.setup()
    import logging

    logging.getLogger("learning.reflection").setLevel(logging.WARNING)  # a drained turn's task logs at INFO
    from django.core.management import call_command
    from django.db import connection, connections

    from crewlet.models import Company, Role, Seat, Unit
    from learning.models import Turn
    from learning.reflection.ring import RING
    from learning.reflection.tasks import reflect_turn

    call_command("migrate", verbosity=0)
    _use_offline_config()
    company = Company.objects.create(name="Bench")
    role = Role.objects.create(company=company, name="swe", llm=["offline"], llm_auxiliary=["offline"])
    unit = Unit.objects.create(company=company, key="eng", name="Eng")
    seats = [Seat.objects.create(company=company, role=role, unit=unit, handle=h) for h in ("ana", "bo", "cy")]

    def store(prefix: str, count: int = turns) -> list[int]:
        ids = []
        for n in range(count):
            rec = _record(n, seats[n % 3].handle)
            rec["run_id"], rec["work_key"] = f"{prefix}-{rec['run_id']}", f"{prefix}-{rec['work_key']}"
            turn = Turn.objects.create(run_id=rec["run_id"], work_key=rec["work_key"], seat=seats[n % 3],
                                       conversation_id=rec["conversation_id"], conversation_kind="chat",
                                       review_outcome=rec["review_outcome"], payload=rec)
            ids.append(turn.pk)
        return ids

    # sequential, timed with nothing else in the loop
    ids = store("seq")
    started = time.perf_counter()
    with _CPU(connection) as cpu:
        for turn_id in ids:
            reflect_turn(turn_id)
    sequential = time.perf_counter() - started

    # the floor, same run: the rows those passes wrote, written again one transaction a turn
    plans, models = _floor_rows(ids)
    with _CPU(connection) as floor_cpu:
        floor = _write_floor(plans, models)
    for episode in [p[1] for p in plans if p[1] is not None]:
        episode.pk, episode.run_id = None, f"{episode.run_id}-again"  # written a second time, as new rows
    for plan in plans:
        for obj in [*plan[2], *plan[3]["events"], *plan[3]["diary"], *plan[3]["skills"]]:
            obj.pk = None
        for skill in plan[3]["skills"]:
            skill.name = f"{skill.name} again"
    floor_deferred = _write_floor(plans, models, deferred=True)

    # statements and transactions a turn, counted on their own set of turns
    counted = store("cnt", min(turns, 100))
    counts, stop = _counting(connection)
    for turn_id in counted:
        reflect_turn(turn_id)
    stop()

    if os.environ.get("CREWLET_BENCH_PROFILE") == "1":  # where the time goes, on its own set of turns
        import cProfile
        import pstats

        profiled = store("prof", min(turns, 100))
        profiler = cProfile.Profile()
        profiler.enable()
        for turn_id in profiled:
            reflect_turn(turn_id)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(45)
        pstats.Stats(profiler).print_callers("deepcopy")

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

    # as the queue runs it: PROCESSES worker processes taking the turns' tasks in order from one queue
    ids = store("proc")
    connections.close_all()  # each process opens its own
    processes_rate = _processes(ids)

    # peak memory: its own run, tracemalloc on (it slows a loop about threefold: never the timed one)
    mem = store("mem", min(turns, 100))
    tracemalloc.start()
    for turn_id in mem:
        reflect_turn(turn_id)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    unreflected = Turn.objects.filter(reflected_at__isnull=True).count()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    n_counted = len(counted)
    print(f"{turns} turns")
    print(f"  sequential: {turns / sequential:7.1f} turns/s ({sequential * 1000 / turns:.1f} ms a turn)"
          f"   floor, same run: {turns / floor:7.1f} turns/s ({floor * 1000 / turns:.1f} ms) -> {sequential / floor:.1f}x the floor")
    print(f"  CPU a turn, sequential: {cpu.line(turns)}   floor: {floor_cpu.line(turns)}")
    print(f"  floor with the drain's deferred flush (one durable commit every 20 turns): {turns / floor_deferred:7.1f} turns/s"
          f" ({floor_deferred * 1000 / turns:.1f} ms) -> {sequential / floor_deferred:.1f}x")
    print(f"  {threads} threads:  {turns / parallel:7.1f} turns/s (3 seats, passes for one seat serialised)")
    print(f"  {PROCESSES} processes: {processes_rate:7.1f} turns/s (each task from one queue, in order, as the"
          f" queue's {PROCESSES} workers take them; 3 seats, passes for one seat serialised)")
    print(f"  per turn: {counts['statements'] / n_counted:.1f} statements, {counts['transactions'] / n_counted:.2f} transactions"
          f" (over {n_counted} turns)")
    if os.environ.get("CREWLET_BENCH_SQL") == "1":
        for shape, n in counts["shapes"].most_common():
            print(f"    {n / n_counted:5.2f}  {shape}")
    print(f"  peak traced Python memory over {len(mem)} turns (separate run): {peak / 1e6:.1f} MB; process max RSS {rss_mb:.0f} MB")
    print(f"  turns left unreflected: {unreflected}")


def run_fresh(turns: int, threads: int) -> int:
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from fresh_db import run_fresh

    return run_fresh([__file__, "--child", "--turns", str(turns), "--threads", str(threads)], CREWLET_BENCH_CHILD="1")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--child", action="store_true")
    args = parser.parse_args()
    if args.child:
        child(args.turns, args.threads)
        return 0
    return run_fresh(args.turns, args.threads)


if __name__ == "__main__":
    sys.exit(main())
