"""Hybrid search in PostgreSQL: a ranking by meaning and a ranking by words, fused by score.

One statement ranks the rows of a scope two ways, each cut to a shortlist:

- by meaning: a row is as near the query as the nearest of its vectors -- its own (pgvector cosine
  distance) or, for a corpus with pieces (an episode's own lines), any of its pieces';
- by words: BM25 over the query's content words, against the row's generated ``tsvector``. A word
  counts once per row (binary term frequency: the texts are short), weighted by its rarity in the
  scope, and a row's length is normalised against the average of the rows that match.

The two shortlists are pooled and fused by a convex combination of normalised scores: ``WEIGHT`` x the
row's cosine similarity min-max normalised over the pool, plus ``1 - WEIGHT`` x its BM25 score over the
pool's best. A row one ranking did not list adds nothing by it. A row past ``max_distance`` by meaning
keeps no similarity, but may still be found by its words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from django.db import connection

from core.vectors import distance_sql, to_pg_text

# Chosen on one development set and confirmed on the other (bench/recall.py prints the protocol).
WEIGHT = 0.5  # of meaning against words: the two count alike
SHORTLIST = 50  # rows each ranking contributes to the fusion
PIECES_PER_ROW = 4  # pieces read per shortlisted row: a row's nearest pieces come first, a row has a few
BM25_K1 = 1.2  # BM25's usual constants (Robertson and Zaragoza)
BM25_B = 0.75


@dataclass(frozen=True)
class Pieces:
    """Extra vectors of a row: ``table.fk`` names the row, each piece carries its model and width."""

    table: str
    fk: str


@dataclass(frozen=True)
class Corpus:
    """A searchable table with generated ``search_tsv`` (its words) and ``search_len`` (their count)
    columns and, optionally, the table of its pieces."""

    table: str
    pieces: Pieces | None = None


class Ranked(NamedTuple):
    """``(row id, fused score)`` best first, and the least cosine distance of any row compared by meaning
    (how near the query the nearest stored text is); None when nothing was compared by meaning."""

    rows: list[tuple[int, float]]
    nearest: float | None


def ranked(corpus: Corpus, **kwargs) -> list[tuple[int, float]]:
    """``search``'s rows alone."""
    return search(corpus, **kwargs).rows


def _meaning(corpus: Corpus, scope: str, scope_params: Sequence, vector: Sequence[float], model: str,
             shortlist: int) -> tuple[str, list]:
    """The ``meaning`` CTE: ``(id, d)``, the shortlist nearest rows by the nearest of their vectors.

    Distances are written against the column cast to the query's width (``distance_sql``), so an
    approximate index of that width (``core.vectors.ensure_index``) can serve the ordering; a row's
    pieces are read nearest first and grouped after, so that index serves them too."""
    qv, dim = to_pg_text(vector), len(vector)
    own = (f"SELECT t.id, {distance_sql('t', dim)} AS d FROM {corpus.table} t"
           f" WHERE ({scope}) AND t.embedding IS NOT NULL AND t.embedding_model = %s AND t.embedding_dim = {dim}"
           f" ORDER BY d LIMIT {shortlist}")
    params = [qv, *scope_params, model]
    if corpus.pieces is None:
        return f"meaning AS ({own})", params
    p = corpus.pieces
    lines = (f"SELECT p.{p.fk} AS id, {distance_sql('p', dim)} AS d FROM {p.table} p"
             f" JOIN {corpus.table} t ON t.id = p.{p.fk}"
             f" WHERE ({scope}) AND p.embedding_model = %s AND p.embedding_dim = {dim}"
             f" ORDER BY d LIMIT {PIECES_PER_ROW * shortlist}")
    params += [qv, *scope_params, model]
    sql = (f"meaning AS (SELECT id, MIN(d) AS d FROM (({own}) UNION ALL ({lines})) u"
           f" GROUP BY id ORDER BY d, id DESC LIMIT {shortlist})")
    return sql, params


def _words(corpus: Corpus, scope: str, scope_params: Sequence, words: Sequence[str],
           shortlist: int) -> tuple[list[str], list]:
    """The CTEs of the BM25 ranking, ending in ``bm25`` ``(id, r)``: the scope's size, the rows matching
    any word (their average length stands for the scope's: the counts stay an index read), each word's
    rows among them, and the sum of the matched words' weights."""
    # ``asked`` is MATERIALIZED: inlined into ``hits``, it would parse each word again for every row it meets
    ctes = [
        f"stats AS MATERIALIZED (SELECT COUNT(*)::float8 AS n FROM {corpus.table} t WHERE ({scope}))",
        "asked AS MATERIALIZED (SELECT w, to_tsquery('english', w) AS q FROM unnest(%s::text[]) w"
        " WHERE numnode(to_tsquery('english', w)) > 0)",
        f"matched AS MATERIALIZED (SELECT t.id, t.search_tsv AS v, t.search_len AS len FROM {corpus.table} t"
        f" WHERE ({scope}) AND t.search_tsv @@ to_tsquery('english', %s))",
        "avgdl AS MATERIALIZED (SELECT GREATEST(AVG(len), 1)::float8 AS len FROM matched)",
        "hits AS (SELECT m.id, m.len, a.w FROM matched m JOIN asked a ON m.v @@ a.q)",
        "df AS MATERIALIZED (SELECT w, COUNT(*)::float8 AS n FROM hits GROUP BY w)",
        f"bm25 AS (SELECT h.id, SUM(ln(1 + (s.n - df.n + 0.5) / (df.n + 0.5)) * {BM25_K1 + 1}"
        f" / (1 + {BM25_K1} * (1 - {BM25_B} + {BM25_B} * h.len / a.len))) AS r"
        f" FROM hits h JOIN df USING (w) CROSS JOIN stats s CROSS JOIN avgdl a GROUP BY h.id"
        f" ORDER BY r DESC, h.id DESC LIMIT {shortlist})",
    ]
    # each word alone in the OR-query: to_tsquery reads a bare word as its lexeme (stopwords drop out)
    params = [*scope_params, list(words), *scope_params, " | ".join(words)]
    return ctes, params


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
) -> Ranked:
    """The best ``limit`` rows of ``scope`` (a WHERE clause over the corpus table aliased ``t``).

    ``vector`` None ranks by words alone; no ``words`` ranks by meaning alone. Ties go to the newest id.
    ``words`` are content words (letters and digits only, as ``core.words.search_words`` gives them).
    """
    shortlist = max(SHORTLIST, int(limit))
    ctes: list[str] = []
    params: list = []
    if vector is not None:
        sql, more = _meaning(corpus, scope, scope_params, vector, model, shortlist)
        ctes.append(sql)
        params += more
    else:
        ctes.append("meaning AS (SELECT NULL::bigint AS id, NULL::float8 AS d WHERE false)")
    if words:
        more_ctes, more = _words(corpus, scope, scope_params, words, shortlist)
        ctes += more_ctes
        params += more
    else:
        ctes.append("bm25 AS (SELECT NULL::bigint AS id, NULL::float8 AS r WHERE false)")
    if vector is None and not words:
        return Ranked([], None)
    far = "" if max_distance is None else f" AND m.d <= {float(max_distance)!r}"
    # the pool: every row either ranking shortlisted; a row past max_distance keeps no similarity
    ctes.append(f"pool AS (SELECT COALESCE(m.id, b.id) AS id, CASE WHEN m.id IS NOT NULL{far} THEN 1 - m.d END AS sim,"
                " b.r FROM meaning m FULL JOIN bm25 b ON b.id = m.id)")
    ctes.append("bounds AS (SELECT MIN(sim) AS lo, MAX(sim) AS hi, MAX(r) AS best FROM pool)")
    by_meaning = "COALESCE(CASE WHEN x.hi > x.lo THEN (p.sim - x.lo) / (x.hi - x.lo) ELSE 1 END, 0)"
    by_words = "COALESCE(p.r / NULLIF(x.best, 0), 0)"
    weight = WEIGHT if vector is not None and words else (1.0 if vector is not None else 0.0)
    fused = (f"SELECT p.id, {weight!r} * {by_meaning} + {1 - weight!r} * {by_words} AS score"
             f" FROM pool p CROSS JOIN bounds x WHERE p.sim IS NOT NULL OR p.r IS NOT NULL"
             f" ORDER BY score DESC, p.id DESC LIMIT {int(limit)}")
    nearest = "(SELECT MIN(d) FROM meaning)"
    # one row even when nothing ranked, so the nearest distance is known either way
    sql = ("WITH " + ", ".join(ctes) + f" SELECT f.id, f.score, n.nearest FROM (SELECT {nearest} AS nearest) n"
           f" LEFT JOIN ({fused}) f ON true ORDER BY f.score DESC, f.id DESC")
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    nearest_d = rows[0][2] if rows else None
    return Ranked([(int(i), float(s)) for i, s, _n in rows if i is not None],
                  None if nearest_d is None else float(nearest_d))
