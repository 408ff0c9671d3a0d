"""Hybrid similarity in the database: a vector ranking and a full-text ranking fused by score, in one
SQL statement on both engines. Episodes, the diary's similarity half and native knowledge search
all rank through ``ranked``.

The rule (measured in ``bench/recall.py``; the weight chosen leave-one-conversation-out):

- the pool is the ``shortlist`` rows nearest the query's vector and the ``shortlist`` rows best by
  words; a row farther than ``max_distance`` (the relevance floor) is answered only if its words
  match, but still counts in the normalisation, so a small pool is not stretched over a few rows;
- a row's cosine is its vector's, or -- for a corpus with pieces (an episode's ask, line by line)
  -- the best of its vector's and its pieces'; pieces are compared for the pool only;
- score = ``weight`` x the cosine min-max normalised over the pool + (1 - ``weight``) x the row's
  BM25 divided by the pool's best BM25, so a row no query word matches adds nothing by words and
  a row without a vector of the query's model adds nothing by meaning.

Full text: SQLite FTS5 ``bm25()`` over a contentless index kept by triggers, whose ``seat`` column
(when the corpus has one) lets one MATCH score only that seat's rows; PostgreSQL a generated
``tsvector`` column served by a GIN index, scored by BM25 computed in SQL over the scope (term
frequencies from the tsvector's positions, document frequencies over the scope's matching rows,
the length a generated column) -- ``ts_rank`` has no rarity weighting. Only content words
(``learning.words``-style, given by the caller) are searched. No vector ever comes back.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection

from core.vectors import distance_sql, to_blob, to_pg_text

WEIGHT = 0.5  # of meaning against words; see bench/recall.py --weights (leave-one-conversation-out)
SHORTLIST = 50  # rows taken from each ranking into the pool
BM25_K1 = 1.2  # FTS5's bm25() constants, used by the PostgreSQL scorer too
BM25_B = 0.75
_PART = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass(frozen=True)
class Pieces:
    """Extra vectors of a row (``table.fk`` -> the row's id), each with its model and width."""

    table: str
    fk: str


@dataclass(frozen=True)
class Corpus:
    """Where a table's vectors and words are: its FTS5 index and bm25() column weights (SQLite), its
    tsvector and length columns (PostgreSQL), whether its FTS5 index carries the seat."""

    table: str
    fts: str
    fts_weights: str  # bm25() weights, one per FTS5 column in order
    seat_column: bool = False  # the FTS5 index's first column is "s<seat id>"
    tsv: str = "search_tsv"
    tsv_len: str = "search_len"
    title_weight: float = 1.0  # PostgreSQL: an occurrence weighted 'A' (a title) counts this many times
    pieces: Pieces | None = None


def fts5_query(words: Sequence[str], *, seat: int | None = None, column: str = "") -> str:
    """An FTS5 MATCH string: any of the words (each a quoted phrase), within the seat's rows."""
    phrases = " OR ".join('"' + w.replace('"', " ") + '"' for w in words)
    body = f"{column} : ({phrases})" if column else f"({phrases})"
    return f"seat : s{int(seat)} AND {body}" if seat is not None else body


def pg_phrases(words: Sequence[str]) -> list[str]:
    """Each word as the text of one ``phraseto_tsquery`` (a hyphenated id stays one phrase)."""
    return [" ".join(_PART.findall(w)) for w in words if _PART.search(w)]


def ranked(
    corpus: Corpus,
    *,
    scope: str,
    scope_params: Sequence,
    vector: Sequence[float] | None,
    model: str,
    words: Sequence[str],
    limit: int,
    seat: int | None = None,
    max_distance: float | None = None,
    weight: float = WEIGHT,
    shortlist: int = SHORTLIST,
) -> list[tuple[int, float]]:
    """``(row id, fused score)`` of the best ``limit`` rows of ``scope``, best first (ties: newest id).

    ``scope`` is a WHERE clause over the corpus table aliased ``t`` (with ``scope_params``); it bounds
    both halves. ``vector`` None ranks by words alone; no ``words`` ranks by meaning alone.
    """
    vendor = connection.vendor
    if vendor not in ("sqlite", "postgresql"):
        raise NotImplementedError(f"no hybrid search for {vendor}")
    pg = vendor == "postgresql"
    words = list(words)
    if pg:
        words = pg_phrases(words)
    params: list = []
    ctes: list[str] = []
    if vector is not None:
        dim = len(vector)
        qv = "qv.v" if pg else "%s"
        if pg:
            ctes.append("qv AS (SELECT %s::vector AS v)")
            params.append(to_pg_text(vector))
        dist = f"(CASE WHEN t.embedding_model = %s THEN {distance_sql(vendor, 't.embedding', dim, qv)} END)"
        dist_params = [model] if pg else [model, to_blob(vector)]
    else:
        dist, dist_params = ("CAST(NULL AS double precision)" if pg else "NULL"), []
    length = f", t.{corpus.tsv_len} AS len" if pg and words else ""
    ctes.append(f"cand AS MATERIALIZED (SELECT t.id AS id, {dist} AS d{length} FROM {corpus.table} t"
                f"{', qv' if pg and vector is not None else ''} WHERE {scope})")
    params += dist_params + list(scope_params)
    ctes.append("vec AS (SELECT id, d FROM cand WHERE d IS NOT NULL ORDER BY d, id DESC LIMIT %s)")
    params.append(shortlist)
    if words:
        text_ctes, text_params = (_pg_text(corpus, words, shortlist) if pg
                                  else _sqlite_text(corpus, words, seat, shortlist))
        ctes += text_ctes
        params += text_params
    else:
        ctes.append("txt AS (SELECT id, 0.0 AS s FROM cand WHERE 1 = 0)")
    ctes.append("pool AS (SELECT id FROM vec UNION SELECT id FROM txt)")
    best = "c.d"
    piece_join = ""
    if corpus.pieces is not None and vector is not None:
        p = corpus.pieces
        pdist = distance_sql(vendor, "p.embedding", len(vector), "qv.v" if pg else "%s")
        ctes.append(f"piece AS (SELECT p.{p.fk} AS id, MIN({pdist}) AS d FROM {p.table} p"
                    f" JOIN pool ON pool.id = p.{p.fk}{' CROSS JOIN qv' if pg else ''} WHERE p.embedding_model = %s AND p.embedding_dim = %s"
                    f" GROUP BY p.{p.fk})")
        params += ([] if pg else [to_blob(vector)]) + [model, len(vector)]
        least = "LEAST" if pg else "MIN"
        best = f"(CASE WHEN pc.d IS NULL THEN c.d WHEN c.d IS NULL THEN pc.d ELSE {least}(c.d, pc.d) END)"
        piece_join = " LEFT JOIN piece pc ON pc.id = pool.id"
    ctes.append(f"scored AS (SELECT pool.id AS id, {best} AS d, COALESCE(txt.s, 0.0) AS s FROM pool"
                f" JOIN cand c ON c.id = pool.id LEFT JOIN txt ON txt.id = pool.id{piece_join})")
    ctes.append("bounds AS (SELECT MIN(d) AS lo, MAX(d) AS hi, MAX(s) AS top FROM scored)")
    sql = (
        f"WITH {', '.join(ctes)} SELECT scored.id, "
        "%s * (CASE WHEN scored.d IS NULL THEN 0.0 WHEN b.hi > b.lo THEN (b.hi - scored.d) / (b.hi - b.lo) ELSE 1.0 END)"
        " + %s * (CASE WHEN b.top > 0 THEN scored.s / b.top ELSE 0.0 END) AS score"
        f" FROM scored, bounds b{' WHERE scored.d <= %s OR scored.s > 0' if max_distance is not None else ''}"
        " ORDER BY score DESC, scored.id DESC LIMIT %s"
    )
    params += [weight, 1.0 - weight] + ([max_distance] if max_distance is not None else []) + [limit]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [(int(i), float(s)) for i, s in cursor.fetchall()]


def _sqlite_text(corpus: Corpus, words: list[str], seat: int | None, shortlist: int) -> tuple[list[str], list]:
    match = fts5_query(words, seat=seat if corpus.seat_column else None,
                       column="body" if corpus.seat_column else "")
    return [
        # MATERIALIZED: one MATCH (the seat's rows only), then the scope; a rowid constraint pushed into
        # the FTS5 scan would run the MATCH once per candidate row
        f"matched AS MATERIALIZED (SELECT rowid AS id, -bm25({corpus.fts}, {corpus.fts_weights}) AS s"
        f" FROM {corpus.fts} WHERE {corpus.fts} MATCH %s)",
        "txt AS (SELECT m.id AS id, m.s AS s FROM matched m JOIN cand c ON c.id = m.id"
        " ORDER BY m.s DESC, m.id DESC LIMIT %s)",
    ], [match, shortlist]


def _pg_text(corpus: Corpus, words: list[str], shortlist: int) -> tuple[list[str], list]:
    query = " || ".join(["phraseto_tsquery('english', %s)"] * len(words))
    tf = "COALESCE(array_length(u.positions, 1), 1)"
    if corpus.title_weight != 1.0:
        tf = (f"COALESCE((SELECT SUM(CASE WHEN w = 'A' THEN {float(corpus.title_weight)} ELSE 1 END)"
              " FROM unnest(u.weights) w), 1)")
    return [
        f"tq AS (SELECT {query} AS q, tsvector_to_array(to_tsvector('english', %s)) AS lexemes)",
        f"matched AS MATERIALIZED (SELECT t.id AS id, t.{corpus.tsv} AS tsv, c.len AS len FROM {corpus.table} t"
        f" JOIN cand c ON c.id = t.id, tq WHERE t.{corpus.tsv} @@ tq.q)",
        f"tf AS (SELECT m.id AS id, u.lexeme AS lexeme, {tf} AS tf, m.len AS len FROM matched m, tq,"
        " unnest(m.tsv) u WHERE u.lexeme = ANY(tq.lexemes))",
        "df AS (SELECT lexeme, COUNT(*) AS df FROM tf GROUP BY lexeme)",
        "stats AS (SELECT COUNT(*) AS n, GREATEST(AVG(len), 1) AS avgdl FROM cand)",
        "txt AS (SELECT tf.id AS id, SUM(ln(1 + (stats.n - df.df + 0.5) / (df.df + 0.5))"
        f" * tf.tf * {BM25_K1 + 1} / (tf.tf + {BM25_K1} * ({1 - BM25_B} + {BM25_B} * tf.len / stats.avgdl))) AS s"
        " FROM tf JOIN df ON df.lexeme = tf.lexeme, stats GROUP BY tf.id ORDER BY s DESC, tf.id DESC LIMIT %s)",
    ], [*words, " ".join(words), shortlist]
