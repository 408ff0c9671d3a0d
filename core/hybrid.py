"""Hybrid search in PostgreSQL: rankings by meaning and by words, fused by reciprocal rank.

One statement ranks the rows of a scope three ways, each cut to a shortlist:

- by the row's own vector (pgvector cosine distance);
- for a corpus with pieces (an episode's own lines), by the nearest of the row's pieces;
- by words: the query's content words OR-ed against the row's generated ``tsvector``,
  ranked by ``ts_rank_cd`` (cover density, normalised by the row's length).

A row's score is the sum over the rankings it appears in of ``1 / (RRF_K + rank)`` (reciprocal rank
fusion, Cormack et al. 2009): scores of different scales are never compared, only places. A row
past ``max_distance`` by meaning takes no place in that ranking, but may still be found by words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from django.db import connection

from core.vectors import to_pg_text

RRF_K = 60  # the fusion constant of the RRF paper; bench/recall.py prints the choice on each data set
SHORTLIST = 50  # rows each ranking contributes to the fusion


@dataclass(frozen=True)
class Pieces:
    """Extra vectors of a row: ``table.fk`` names the row, each piece carries its model and width."""

    table: str
    fk: str


@dataclass(frozen=True)
class Corpus:
    """A searchable table: its generated ``tsvector`` column and, optionally, the table of its pieces."""

    table: str
    tsv: str = "search_tsv"
    pieces: Pieces | None = None


class Ranked(NamedTuple):
    """``(row id, fused score)`` best first, and the least cosine distance of any row compared by meaning
    (how near the query the nearest stored text is); None when nothing was compared by meaning."""

    rows: list[tuple[int, float]]
    nearest: float | None


def ranked(corpus: Corpus, **kwargs) -> list[tuple[int, float]]:
    """``search``'s rows alone."""
    return search(corpus, **kwargs).rows


def search(
    corpus: Corpus,
    *,
    scope: str,
    scope_params: Sequence,
    vector: Sequence[float] | None,
    model: str,
    words: Sequence[str],
    limit: int,
    max_distance: float | None = None,
    shortlist: int | None = None,
    rrf_k: int | None = None,
    **_unused,
) -> Ranked:
    """The best ``limit`` rows of ``scope`` (a WHERE clause over the corpus table aliased ``t``).

    ``vector`` None ranks by words alone; no ``words`` ranks by meaning alone. Ties go to the newest id.
    """
    shortlist = max(SHORTLIST if shortlist is None else shortlist, limit)
    k = RRF_K if rrf_k is None else rrf_k
    ctes, params, arms = [], [], []
    far = "" if max_distance is None else " WHERE d <= %s"
    far_params = [] if max_distance is None else [max_distance]
    if vector is not None:
        qv, dim = to_pg_text(vector), len(vector)
        ctes.append(
            f"own AS (SELECT t.id, t.embedding <=> %s::vector AS d FROM {corpus.table} t"
            f" WHERE ({scope}) AND t.embedding IS NOT NULL AND t.embedding_model = %s AND t.embedding_dim = %s"
            f" ORDER BY d, t.id DESC LIMIT {shortlist})")
        params += [qv, *scope_params, model, dim]
        arms.append("SELECT id, d, ROW_NUMBER() OVER (ORDER BY d, id DESC) AS place FROM own" + far)
        params_arms = list(far_params)
        if corpus.pieces is not None:
            p = corpus.pieces
            ctes.append(
                f"lines AS (SELECT p.{p.fk} AS id, MIN(p.embedding <=> %s::vector) AS d FROM {p.table} p"
                f" JOIN {corpus.table} t ON t.id = p.{p.fk}"
                f" WHERE ({scope}) AND p.embedding_model = %s AND p.embedding_dim = %s"
                f" GROUP BY p.{p.fk} ORDER BY d, id DESC LIMIT {shortlist})")
            params += [qv, *scope_params, model, dim]
            arms.append("SELECT id, d, ROW_NUMBER() OVER (ORDER BY d, id DESC) AS place FROM lines" + far)
            params_arms += far_params
    else:
        params_arms = []
    if words:
        ctes.append(
            f"txt AS (SELECT t.id, ts_rank_cd(t.{corpus.tsv}, q, 1) AS r"
            f" FROM {corpus.table} t, to_tsquery('english', %s) q WHERE ({scope}) AND t.{corpus.tsv} @@ q"
            f" ORDER BY r DESC, t.id DESC LIMIT {shortlist})")
        params += [" | ".join(words), *scope_params]
        arms.append("SELECT id, NULL::float8 AS d, ROW_NUMBER() OVER (ORDER BY r DESC, id DESC) AS place FROM txt")
    if not arms:
        return Ranked([], None)
    nearest = ("(SELECT MIN(d) FROM (SELECT d FROM own" + (" UNION ALL SELECT d FROM lines" if corpus.pieces else "")
               + ") n)") if vector is not None else "NULL::float8"
    fused = (f"SELECT id, SUM(1.0 / ({int(k)} + place)) AS score FROM places"
             f" GROUP BY id ORDER BY score DESC, id DESC LIMIT {int(limit)}")
    # one row even when nothing ranked, so the nearest distance is known either way
    sql = ("WITH " + ", ".join(ctes) + ", places AS (" + " UNION ALL ".join(arms) + ")"
           f" SELECT f.id, f.score, n.nearest FROM (SELECT {nearest} AS nearest) n"
           f" LEFT JOIN ({fused}) f ON true ORDER BY f.score DESC, f.id DESC")
    with connection.cursor() as cursor:
        cursor.execute(sql, params + params_arms)
        rows = cursor.fetchall()
    nearest_d = rows[0][2] if rows else None
    return Ranked([(int(i), float(s)) for i, s, _n in rows if i is not None],
                  None if nearest_d is None else float(nearest_d))
