"""Hybrid similarity over a seat's raw episodes, ranked in SQL on both engines.

Two rankings are fused by reciprocal rank (``1 / (EPISODE_RRF_K + rank)`` summed):

- by meaning: a turn is as near to the query as the nearest of its vectors -- the whole text's
  pooled vector or one of its lines' (``episode_pieces``) -- within ``RECALL_MAX_DISTANCE``;
- by words: SQLite FTS5 ``bm25`` over ``episodes_fts``, PostgreSQL ``ts_rank`` over the generated
  ``search_tsv`` column (GIN), any query word matching.

Both halves read only the seat's raw rows with a vector of the query's model and width (the
same reach as before: ``unreachable_count`` stays the count of what no search can return), and
answer ids with scores -- never vectors.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from django.db import connection

from core.vectors import distance_sql, to_blob, to_pg_text

if TYPE_CHECKING:
    from crewlet.models import Seat

EPISODE_RRF_K = 10  # measured on the LoCoMo and tau-bench dev sets (bench/recall.py): 10 beat 60 by 8 points R@10
CANDIDATES = 100  # depth of each ranking before fusion
RECALL_MAX_DISTANCE = 0.9
MAX_QUERY_WORDS = 32

_WORD = re.compile(r"\w+", re.UNICODE)


def query_words(query: str) -> list[str]:
    return list(dict.fromkeys(w.lower() for w in _WORD.findall(query)))[:MAX_QUERY_WORDS]


def _scope(outcome: str | None) -> str:
    extra = " AND review_outcome = %s" if outcome else ""
    return ("SELECT id FROM episodes WHERE seat_id = %s AND kind = 'raw' AND embedding IS NOT NULL"
            f" AND embedding_model = %s AND embedding_dim = %s{extra}")


def _vector_sql(vendor: str, dim: int) -> str:
    return (
        "dists AS ("
        f" SELECT e.id AS id, {distance_sql(vendor, 'e.embedding', dim)} AS d FROM episodes e JOIN cand c ON c.id = e.id"
        " UNION ALL"
        f" SELECT p.episode_id AS id, {distance_sql(vendor, 'p.embedding', dim)} AS d FROM episode_pieces p"
        " JOIN cand c ON c.id = p.episode_id WHERE p.embedding_model = %s AND p.embedding_dim = %s),"
        " vec AS (SELECT id, ROW_NUMBER() OVER (ORDER BY MIN(d), id DESC) AS r FROM dists"
        " GROUP BY id HAVING MIN(d) <= %s ORDER BY MIN(d), id DESC LIMIT %s)"
    )


def _text_sql(vendor: str) -> str:
    if vendor == "postgresql":
        return (
            "txt AS (SELECT e.id, ROW_NUMBER() OVER (ORDER BY ts_rank(e.search_tsv, q.q, 1) DESC, e.id DESC) AS r"
            " FROM episodes e, (SELECT to_tsquery('english', %s) AS q) q"
            " WHERE e.id IN (SELECT id FROM cand) AND e.search_tsv @@ q.q"
            " ORDER BY ts_rank(e.search_tsv, q.q, 1) DESC, e.id DESC LIMIT %s)"
        )
    return (
        # MATERIALIZED: one MATCH, then the seat's scope; a rowid constraint pushed into the FTS5 scan would
        # run the MATCH once per candidate row
        "matched AS MATERIALIZED (SELECT rowid AS id, bm25(episodes_fts) AS s FROM episodes_fts"
        " WHERE episodes_fts MATCH %s),"
        " txt AS (SELECT m.id, ROW_NUMBER() OVER (ORDER BY m.s, m.id DESC) AS r FROM matched m"
        " JOIN cand c ON c.id = m.id ORDER BY m.s, m.id DESC LIMIT %s)"
    )


def _text_query(vendor: str, words: list[str]) -> str:
    if vendor == "postgresql":
        return " | ".join(words)
    return " OR ".join(f'"{w}"' for w in words)


def ranked(*, seat: Seat, vector, model: str, query: str, limit: int, outcome: str | None = None) -> list[tuple[int, float]]:
    """``(episode id, fused score)``, best first: the fused ranking of the seat's raw turns."""
    vendor = connection.vendor
    if vendor not in ("sqlite", "postgresql"):
        raise NotImplementedError(f"no full-text episode search for {vendor}")
    qvec = to_pg_text(vector) if vendor == "postgresql" else to_blob(vector)
    dim = len(vector)
    scope_params = [seat.pk, model, dim] + ([outcome] if outcome else [])
    params: list = [*scope_params, qvec, qvec, model, dim, RECALL_MAX_DISTANCE, CANDIDATES]
    ctes = [f"cand AS ({_scope(outcome)})", _vector_sql(vendor, dim)]
    unions = "SELECT id, r FROM vec"
    words = query_words(query)
    if words:
        ctes.append(_text_sql(vendor))
        params += [_text_query(vendor, words), CANDIDATES]
        unions += " UNION ALL SELECT id, r FROM txt"
    sql = (f"WITH {', '.join(ctes)} SELECT id, SUM(1.0 / (%s + r)) AS score FROM ({unions}) fused"
           " GROUP BY id ORDER BY score DESC, id DESC LIMIT %s")
    params += [EPISODE_RRF_K, limit]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [(int(i), float(s)) for i, s in cursor.fetchall()]
