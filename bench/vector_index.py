"""A seat of 100,000 episodes: recall through the approximate vector index against the exact scan.

One seat holds ``--episodes`` raw episodes (one own line each) and five other seats 2,000 each, so the
index must filter by seat as it scans. Vectors are 384 wide, drawn around 200 topic directions (real
turns cluster; uniform random vectors would all be equally far), generated in SQL; each turn's text
names its topic and a few filler words. The HNSW indexes come from ``core.vectors.ensure_index``.

Printed, each beside its floor or baseline from the same run:

- ``query_episodes``' ranking (``episode_search.ranked``, limit 10) and the turn start's recall
  (``episodes.recall``, limit 3): p50 and p95 with the index, beside the same calls made to scan
  exactly (index scans off), and the p50 target of 50 ms;
- recall@10 of the index: the ten nearest by meaning through the index against the exact ten (>= 0.95).

Usage: python bench/vector_index.py [--episodes 100000] [--queries 40]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIM = 384
TOPICS = 200
MODEL = "bench-random-384"
TARGET_P50_MS = 50.0
TARGET_RECALL = 0.95


def setup_django() -> None:
    sys.path.insert(0, ROOT)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crewlet.settings")
    if not os.environ.get("DATABASE_URL"):
        from crewlet import embedded_db

        os.environ["DATABASE_URL"] = embedded_db.throwaway()[1]
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _defaults(model, skip: set[str]) -> tuple[list[str], list]:
    """Every concrete column of ``model`` not in ``skip``, with its Python default as a parameter."""
    from django.db import connection

    cols, values = [], []
    for f in model._meta.concrete_fields:
        if f.primary_key or f.column in skip:
            continue
        cols.append(f.column)
        values.append(f.get_db_prep_save(f.get_default(), connection))
    return cols, values


def fill(seat_id: int, n: int, first: int) -> None:
    """``n`` raw episodes of one seat around the topic directions, and one own line each, in SQL."""
    from django.db import connection

    from learning.models import Episode, EpisodePiece

    skip = {"seat_id", "kind", "run_id", "ask", "task_summary", "embedding", "embedding_model", "embedding_dim",
            "started_at", "ended_at"}
    cols, values = _defaults(Episode, skip)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO episodes (seat_id, kind, run_id, ask, task_summary, embedding, embedding_model,"
            f" embedding_dim, started_at, ended_at, {', '.join(cols)})"
            f" SELECT %s, 'raw', 'bench-' || g, 'topic' || (g %% {TOPICS}) || ' asks w' || floor(random() * 5000)"
            f" || ' and w' || floor(random() * 5000), 'Message', ARRAY(SELECT c.v[i] + (random() - 0.5) * 0.6"
            f" FROM generate_series(1, {DIM}) i)::vector, %s, {DIM}, now(), now(), {', '.join(['%s'] * len(cols))}"
            f" FROM generate_series(%s, %s) g JOIN bench_topics c ON c.t = g %% {TOPICS}",
            [seat_id, MODEL, *values, first, first + n - 1])
        pcols, pvalues = _defaults(EpisodePiece, {"episode_id", "ordinal", "embedding", "embedding_model",
                                                  "embedding_dim"})
        extra = (", " + ", ".join(pcols)) if pcols else ""
        cursor.execute(
            f"INSERT INTO episode_pieces (episode_id, ordinal, embedding, embedding_model, embedding_dim{extra})"
            f" SELECT e.id, 0, ARRAY(SELECT x + (random() - 0.5) * 0.1 FROM unnest(e.embedding::real[]) x)::vector,"
            f" %s, {DIM}{', %s' * len(pcols)} FROM episodes e WHERE e.seat_id = %s",
            [MODEL, *pvalues, seat_id])


def timed(call) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def exact(call):
    """``call`` with index scans off: every ranking reads the seat's rows and sorts them (exact)."""
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_indexscan = off")
        return call()


def explain(call) -> None:
    """Print the plan of the statements ``call`` runs (EXPLAIN ANALYZE, after it ran them)."""
    from django.db import connection

    seen = []

    def record(execute, sql, params, many, context):
        seen.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        call()
    for sql, params in seen:
        if sql.lstrip().startswith("WITH"):
            with connection.cursor() as cursor:
                cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
                print("\n".join(row[0] for row in cursor.fetchall()))


def p50_p95(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--explain", action="store_true", help="print the plan of one ranking with and without the index")
    args = parser.parse_args()
    setup_django()
    import numpy as np
    from django.db import connection

    from core import hybrid, vectors
    from crewlet.models import Company
    from learning.memory import episode_search, episodes
    from tests.factories import SeatFactory

    company = Company.objects.create(name="Index bench")
    big = SeatFactory(company=company, handle="big")
    others = [SeatFactory(company=company, handle=f"other{i}", role=big.role, unit=big.unit) for i in range(5)]
    started = time.monotonic()
    with connection.cursor() as cursor:
        for table in vectors.INDEXED_TABLES:  # built once the rows are in, as on a seat that grew
            cursor.execute(f"DROP INDEX IF EXISTS {vectors.index_name(table, DIM)}")
        cursor.execute(f"CREATE TABLE bench_topics AS SELECT t, ARRAY(SELECT random() - 0.5 + t * 0"
                       f" FROM generate_series(1, {DIM})) AS v FROM generate_series(0, {TOPICS - 1}) t")
        cursor.execute("SELECT v FROM bench_topics ORDER BY t")
        topics = [np.asarray(v, dtype=np.float64) for (v,) in cursor.fetchall()]
    fill(big.pk, args.episodes, 0)
    for i, seat in enumerate(others):
        fill(seat.pk, 2000, args.episodes + i * 2000)
    filled = time.monotonic() - started
    started = time.monotonic()
    for table in vectors.INDEXED_TABLES:
        vectors.ensure_index(table, DIM)
    with connection.cursor() as cursor:  # what autovacuum does on a live database: statistics, visibility map
        cursor.execute("VACUUM ANALYZE episodes")
        cursor.execute("VACUUM ANALYZE episode_pieces")
    indexed = time.monotonic() - started
    print(f"seat of {args.episodes:,} episodes (+ 5 seats of 2,000): filled in {filled:.0f}s, indexed in {indexed:.0f}s")

    rng = np.random.default_rng(11)
    queries = []
    for _ in range(args.queries):
        t = int(rng.integers(TOPICS))
        v = topics[t] + rng.uniform(-0.3, 0.3, DIM)
        queries.append((f"topic{t} w{int(rng.integers(5000))}", (v / np.linalg.norm(v)).tolist()))

    def rank(query, vector, limit=10):
        return episode_search.ranked(seat=big, vector=vector, model=MODEL, query=query, limit=limit)

    def recall3(query, vector):
        return episodes.recall(seat=big, vector=vector, model=MODEL, query=query, limit=3)

    def meaning(vector):
        return [i for i, _ in hybrid.search(episode_search.CORPUS, scope="t.seat_id = %s AND t.kind = 'raw'",
                                            scope_params=[big.pk], vector=vector, model=MODEL, words=[],
                                            limit=10).rows]

    if args.explain:
        explain(lambda: rank(*queries[0]))
        explain(lambda: exact(lambda: rank(*queries[0])))
    for query, vector in queries[:3]:  # warm the caches of both paths
        rank(query, vector)
        exact(lambda q=query, v=vector: rank(q, v))
    rows = {"query_episodes ranking (limit 10)": ([], []), "turn start recall (limit 3)": ([], [])}
    hits = total = 0
    for query, vector in queries:
        for name, call in (("query_episodes ranking (limit 10)", lambda q=query, v=vector: rank(q, v)),
                           ("turn start recall (limit 3)", lambda q=query, v=vector: recall3(q, v))):
            rows[name][0].append(timed(call))
            rows[name][1].append(timed(lambda c=call: exact(c)))
        approximate, exact_ten = meaning(vector), exact(lambda v=vector: meaning(v))
        hits += len(set(approximate) & set(exact_ten))
        total += len(exact_ten)
    print(f"{'ms':<36} {'index p50':>10} {'p95':>8} {'exact p50':>10} {'p95':>8}   target")
    for name, (fast, slow) in rows.items():
        f50, f95 = p50_p95(fast)
        s50, s95 = p50_p95(slow)
        verdict = "met" if f50 <= TARGET_P50_MS else "MISSED"
        print(f"{name:<36} {f50:>10.1f} {f95:>8.1f} {s50:>10.1f} {s95:>8.1f}   p50 <= {TARGET_P50_MS:.0f} ms: {verdict}")
    rate = hits / total if total else 0.0
    print(f"recall@10 of the index against the exact scan: {rate:.3f}   target >= {TARGET_RECALL}: "
          f"{'met' if rate >= TARGET_RECALL else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
