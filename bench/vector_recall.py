"""Vector recall: a seat's top-50 by cosine distance, ranked in SQL, against loading the seat's
vectors into Python and ranking with numpy (load included), on a throwaway PostgreSQL + pgvector.

20 seats each get N diary rows of 384-wide unit vectors (N = 500, then topped up to 10,000), each seat's
pulled toward a direction of its own (``near``: real notes cluster, and uniform random ones would all lie
past the recall's relevance floor); each query is for one seat. Prints median and p95 per size.

Timed beside the floor (one hand-written statement on the driver's connection) and the load+numpy
baseline, interleaved run by run:

- ``core.vectors.ranked_ids`` (ids and distances, no vectors): the vector ranking over a queryset;
- ``learning.memory.diary.recall_ids``: what the turn start's memory recall runs -- the hybrid statement
  (``core.hybrid``) with its text half empty, as for an ask with no content word, its fusion over the
  shortlist computed in SQL. Both must give the floor's top-50.

Usage: python bench/vector_recall.py [--sizes 500,10000] [--runs 50]
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEATS = 20
DIM = 384
TOP_K = 50
BATCH = 2000
MODEL = "bench-random-384"
CENTER_WEIGHT = 0.5  # a row's share of its seat's direction (``near``)
BASELINE_BUDGET_SECONDS = 10.0  # the numpy baseline stops early past this, after at least 5 runs


# ---- parent: the child process on a throwaway database --------------------------------------------


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="500,10000")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--child", action="store_true")
    args = parser.parse_args(argv)
    if args.child:
        return child(args)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from fresh_db import run_fresh

    started = time.monotonic()
    # production settings: DEBUG's cursor wrapper re-quotes every parameter (a 1.5 kB vector) to log it
    code = run_fresh([os.path.abspath(__file__), "--child", "--sizes", args.sizes, "--runs", str(args.runs)],
                     PYTHONPATH=ROOT, DJANGO_DEBUG="0")
    print(f"\ntotal {time.monotonic() - started:.0f}s")
    return code


# ---- child: set up Django on the given database, fill, measure --------------------------------


def child(args) -> int:
    import django

    sys.path.insert(0, ROOT)
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    import numpy as np

    from demo.foundation import engine_description

    rng = np.random.default_rng(42)
    seats = make_seats()
    target = seats[len(seats) // 2]
    print(f"\n== {engine_description()}")
    header = f"{'rows/seat':>9} {'total rows':>10} {'fill s':>7} | {'method':<40} {'runs':>4} {'median ms':>9} {'p95 ms':>8}"
    print(header)
    print("-" * len(header))
    have = 0
    for n in [int(s) for s in args.sizes.split(",")]:
        fill_started = time.monotonic()
        fill(seats, target, have, n, rng)
        analyze()
        fill_s, have = time.monotonic() - fill_started, n
        query = near(seat_center(target), rng.normal(size=DIM))
        (sql_ms, sql_ids), (memory_ms, memory_ids), (floor_ms, floor_ids), (np_ms, np_ids) = measure_interleaved(
            [
                lambda t=target, q=query: sql_top(t, q),
                lambda t=target, q=query: memory_top(t, q),
                lambda t=target, q=query: floor_top(t, q),
                lambda t=target, q=query: numpy_top(t, q),
            ],
            args.runs,
            budget=BASELINE_BUDGET_SECONDS,
        )
        for i, (method, ms) in enumerate(
            [
                ("ranked_ids(...): ids + distances", sql_ms),
                ("diary.recall_ids(...): the turn start's", memory_ms),
                ("raw SQL on the driver (floor)", floor_ms),
                ("load seat's vectors + numpy (baseline)", np_ms),
            ]
        ):
            lead = f"{n:>9,} {n * SEATS:>10,} {fill_s:>7.1f}" if i == 0 else " " * 28
            print(f"{lead} | {method:<40} {len(ms):>4} {statistics.median(ms):>9.2f} {p95(ms):>8.2f}")
        for method, ms, ids in (("ranked_ids", sql_ms, sql_ids), ("diary.recall_ids", memory_ms, memory_ids)):
            agree = "same top-50" if ids == np_ids == floor_ids else "TOP-50 DIFFERS"
            speedup = statistics.median(np_ms) / statistics.median(ms)
            over_floor = statistics.median(ms) / statistics.median(floor_ms)
            print(f"{'':28} | ({method}: {agree}; {speedup:.1f}x faster than load+numpy, {over_floor:.1f}x the floor)")
    return 0


def make_seats():
    from crewlet.models import Company, Role, Seat, Unit

    company = Company.objects.create(name="Bench")
    role = Role.objects.create(company=company, name="swe")
    unit_row = Unit.objects.create(company=company, key="eng", name="Engineering")
    return [Seat.objects.create(company=company, role=role, unit=unit_row, handle=f"bench{i:02d}") for i in range(SEATS)]


def unit(vector):
    import numpy as np

    return (vector / np.linalg.norm(vector)).astype(np.float32)


def seat_center(seat):
    """What a seat's notes are about: one direction per seat. Real notes cluster (a seat's notes are of its
    work); uniform random vectors would all lie past the recall's relevance floor (cosine ~0 +- 0.05)."""
    import numpy as np

    return unit(np.random.default_rng(1000 + seat.id).normal(size=DIM))


def near(center, noise):
    """Unit vectors of ``noise``'s rows pulled toward ``center``: cosine ~0.5 to it, ~0.25 to each other."""
    import numpy as np

    noise = noise / np.linalg.norm(noise, axis=-1, keepdims=True)
    vectors = (CENTER_WEIGHT * center + np.sqrt(1 - CENTER_WEIGHT**2) * noise).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)


def fill(seats, target, have: int, want: int, rng) -> None:
    """Top every seat up from ``have`` to ``want`` rows.

    The queried seat's rows go through ``bulk_create`` (the field's own write path); the other seats'
    rows are generated by the server (INSERT ... SELECT of random unit vectors): the field's text input
    is slow in Python, and those rows change nothing about one seat's query but the table's size.
    """
    for seat in seats:
        if seat is target:
            bulk_fill(seat, have, want, rng)
        else:
            server_fill(seat, have, want)


def bulk_fill(seat, have: int, want: int, rng) -> None:
    import numpy as np
    from django.db import transaction
    from django.utils import timezone

    from learning.models import DiaryEntry

    now = timezone.now()
    for start in range(have, want, BATCH):
        count = min(BATCH, want - start)
        vectors = near(seat_center(seat), rng.normal(size=(count, DIM)))
        values = [np.round(v.astype(np.float64), 6).tolist() for v in vectors]  # six decimals shorten the text form
        rows = [
            DiaryEntry(
                seat=seat,
                kind=DiaryEntry.LONG,
                content=f"note {start + i}",
                created_at=now,
                embedding=v,
                embedding_model=MODEL,
                embedding_dim=DIM,
            )
            for i, v in enumerate(values)
        ]
        with transaction.atomic():
            DiaryEntry.objects.bulk_create(rows, batch_size=500)


SERVER_FILL = f"""
INSERT INTO agent_diary (seat_id, kind, content, source, turn_id, use_count, created_at,
                         embedding, embedding_model, embedding_dim)
SELECT %s::bigint, 'diary_long', 'note ' || g.i, '', '', 0, now(),
       l2_normalize((SELECT array_agg(random() - 0.5) FROM generate_series(1, {DIM}) WHERE g.i > 0)::vector),
       %s::text, {DIM}
FROM generate_series(%s::int, %s::int) AS g(i)
"""  # the WHERE on g.i ties the subquery to its row, so every row gets its own vector


def server_fill(seat, have: int, want: int) -> None:
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(SERVER_FILL, [seat.id, MODEL, have + 1, want])


def analyze() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def sql_top(seat, query) -> list[int]:
    """The production path: ids and distances from ``ranked_ids`` (no vectors read)."""
    from core.vectors import ranked_ids
    from learning.models import DiaryEntry

    return [i for i, _ in ranked_ids(DiaryEntry.objects.filter(seat=seat), query.tolist(), MODEL, limit=TOP_K)]


def memory_top(seat, query) -> list[int]:
    """The turn start's memory recall of the seat's notes (``learning.memory.diary.recall_ids``: the hybrid statement,
    its vector half alone, as for an ask with no content word): what production runs for a similarity read."""
    from learning.memory.diary import recall_ids

    return recall_ids(seat=seat, vector=query.tolist(), model=MODEL, limit=TOP_K)


FLOOR_SQL = ("SELECT id, embedding <=> %s AS d FROM agent_diary WHERE seat_id = %s AND embedding_model = %s"
             " AND embedding_dim = %s ORDER BY d, id DESC LIMIT %s")


def floor_top(seat, query) -> list[int]:
    """The floor: one hand-written statement on the driver's own connection, no ORM."""
    from django.db import connection
    from pgvector import Vector

    connection.ensure_connection()
    rows = connection.connection.execute(FLOOR_SQL, [Vector(query), seat.id, MODEL, DIM, TOP_K]).fetchall()
    return [r[0] for r in rows]


def numpy_top(seat, query) -> list[int]:
    import numpy as np

    from learning.models import DiaryEntry

    rows = list(
        DiaryEntry.objects.filter(seat=seat, embedding_model=MODEL, embedding__isnull=False).values_list("id", "embedding")
    )
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    matrix = np.asarray([r[1] for r in rows], dtype=np.float32)
    sims = matrix @ query / np.linalg.norm(matrix, axis=1)
    top = np.argpartition(-sims, TOP_K)[:TOP_K]
    order = top[np.lexsort((-ids[top], -sims[top]))]  # nearest() breaks ties by -id
    return ids[order].tolist()


def measure_interleaved(fns, runs: int, *, budget: float):
    """Each run times every method once, in the next of all their orders, so each method follows
    each other equally often: a change in the host's load, and whatever the method before leaves in
    the caches (the baseline's decoded vectors evict them), hit them alike."""
    for fn in fns:
        fn()  # warm the caches and the connection once, not counted
    orders = list(itertools.permutations(range(len(fns))))
    times, results, started = [[] for _ in fns], [None] * len(fns), time.monotonic()
    for i in range(runs):
        for k in orders[i % len(orders)]:
            fn = fns[k]
            t = time.perf_counter()
            results[k] = fn()
            times[k].append((time.perf_counter() - t) * 1000)
        if i >= 4 and time.monotonic() - started > budget:
            break
    return list(zip(times, results, strict=True))


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
