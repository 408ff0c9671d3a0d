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
SHORTLIST = 30  # rows taken from each ranking into the pool (50: +1 point LoCoMo R@10 in bench/recall.py, ~40% more pieces read)
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
    weight: float | None = None,
    shortlist: int | None = None,
) -> list[tuple[int, float]]:
    """``(row id, fused score)`` of the best ``limit`` rows of ``scope``, best first (ties: newest id).

    ``scope`` is a WHERE clause over the corpus table aliased ``t`` (with ``scope_params``); it bounds
    both halves. ``vector`` None ranks by words alone; no ``words`` ranks by meaning alone.
    """
    vendor = connection.vendor
    if vendor not in ("sqlite", "postgresql"):
        raise NotImplementedError(f"no hybrid search for {vendor}")
    weight = WEIGHT if weight is None else weight
    shortlist = SHORTLIST if shortlist is None else shortlist
    pg = vendor == "postgresql"
    words = list(words)
    if pg:
        words = pg_phrases(words)
    params: list = []
    ctes: list[str] = []
    blob = to_blob(vector) if vector is not None and not pg else None
    if vector is not None:
        dim = len(vector)
        qv = "qv.v" if pg else "%s"
        if pg:
            ctes.append("qv AS (SELECT %s::vector AS v)")
            params.append(to_pg_text(vector))
        dist = f"(CASE WHEN t.embedding_model = %s THEN {distance_sql(vendor, 't.embedding', dim, qv)} END)"
        dist_params = [model] if pg else [model, blob]
    else:
        dist, dist_params = ("CAST(NULL AS double precision)" if pg else "NULL"), []
    # PostgreSQL: the scope's tsvectors ride along, so the text half matches only the scope's rows (the GIN
    # index alone would match every seat's rows, then join them back to the scope)
    length = f", t.{corpus.tsv_len} AS len, t.{corpus.tsv} AS tsv" if pg and words else ""
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
        ctes.append("txt AS (SELECT id, d, 0.0 AS s FROM cand WHERE 1 = 0)")
    # each pool row once, with its vector's distance (from the scan) and its BM25 (0 if no word matched)
    ctes.append("pool AS (SELECT id, MIN(d) AS d, MAX(s) AS s FROM"
                " (SELECT id, d, 0.0 AS s FROM vec UNION ALL SELECT id, d, s FROM txt) found GROUP BY id)")
    best = "pool.d"
    piece_join = ""
    if corpus.pieces is not None and vector is not None:
        p = corpus.pieces
        pdist = distance_sql(vendor, "p.embedding", len(vector), "qv.v" if pg else "%s")
        # pool first (SQLite keeps a CROSS JOIN's order): the pieces are read by their index for the pool's
        # rows only, never scanned
        ctes.append(f"piece AS (SELECT p.{p.fk} AS id, MIN({pdist}) AS d FROM pool CROSS JOIN {p.table} p"
                    f"{' CROSS JOIN qv' if pg else ''} WHERE p.{p.fk} = pool.id AND p.embedding_model = %s"
                    f" AND p.embedding_dim = %s GROUP BY p.{p.fk})")
        params += ([] if pg else [blob]) + [model, len(vector)]
        least = "LEAST" if pg else "MIN"
        best = f"(CASE WHEN pc.d IS NULL THEN pool.d WHEN pool.d IS NULL THEN pc.d ELSE {least}(pool.d, pc.d) END)"
        piece_join = " LEFT JOIN piece pc ON pc.id = pool.id"
    # one pass: each pool row with the pool's bounds (window aggregates), then the fused score
    ctes.append(f"scored AS (SELECT pool.id AS id, {best} AS d, pool.s AS s FROM pool{piece_join})")
    ctes.append("bounded AS (SELECT id, d, s, MIN(d) OVER () AS lo, MAX(d) OVER () AS hi, MAX(s) OVER () AS top"
                " FROM scored)")
    floor = " WHERE d <= %s OR s > 0" if max_distance is not None else ""
    sql = (
        f"WITH {', '.join(ctes)} SELECT id,"
        " %s * (CASE WHEN d IS NULL THEN 0.0 WHEN hi > lo THEN (hi - d) / (hi - lo) ELSE 1.0 END)"
        f" + %s * (CASE WHEN top > 0 THEN s / top ELSE 0.0 END) AS score FROM bounded{floor}"
        " ORDER BY score DESC, id DESC LIMIT %s"
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
        "txt AS (SELECT m.id AS id, c.d AS d, m.s AS s FROM matched m JOIN cand c ON c.id = m.id"
        " ORDER BY m.s DESC, m.id DESC LIMIT %s)",
    ], [match, shortlist]


def _pg_text(corpus: Corpus, words: list[str], shortlist: int) -> tuple[list[str], list]:
    query = " || ".join(["phraseto_tsquery('english', %s)"] * len(words))
    if corpus.title_weight != 1.0:  # every lexeme, each occurrence weighted by where it is
        hits = "c.tsv"
        tf = (f"COALESCE((SELECT SUM(CASE WHEN w = 'A' THEN {float(corpus.title_weight)} ELSE 1 END)"
              " FROM unnest(u.weights) w), 1)")
        keep = " WHERE u.lexeme = ANY(tq.lexemes)"
    else:  # only the query's lexemes, cut out of the tsvector in C (marked A, then filtered) before unnesting
        hits = "ts_filter(setweight(c.tsv, 'A', tq.lexemes), '{a}')"
        tf = "COALESCE(array_length(u.positions, 1), 1)"
        keep = ""
    return [
        f"tq AS (SELECT {query} AS q, tsvector_to_array(to_tsvector('english', %s)) AS lexemes)",
        f"matched AS MATERIALIZED (SELECT c.id AS id, {hits} AS hit, c.len AS len, c.d AS d"
        " FROM cand c, tq WHERE c.tsv @@ tq.q)",
        f"tf AS MATERIALIZED (SELECT m.id AS id, m.d AS d, u.lexeme AS lexeme, ({tf})::float8 AS tf,"
        f" m.len::float8 AS len FROM matched m CROSS JOIN tq CROSS JOIN LATERAL unnest(m.hit) u{keep})",
        "stats AS MATERIALIZED (SELECT COUNT(*)::float8 AS n, GREATEST(AVG(len), 1)::float8 AS avgdl FROM cand)",
        # float8 throughout: numeric ln() per row costs more than the rest of the statement
        "df AS MATERIALIZED (SELECT tf.lexeme AS lexeme, ln(1.0 + (stats.n - COUNT(*) + 0.5) / (COUNT(*) + 0.5)) AS idf"
        " FROM tf CROSS JOIN stats GROUP BY tf.lexeme, stats.n)",
        "txt AS (SELECT tf.id AS id, MIN(tf.d) AS d, SUM(df.idf * tf.tf * "
        f"{BM25_K1 + 1} / (tf.tf + {BM25_K1} * ({1 - BM25_B} + {BM25_B} * tf.len / stats.avgdl))) AS s"
        " FROM tf JOIN df ON df.lexeme = tf.lexeme CROSS JOIN stats GROUP BY tf.id ORDER BY s DESC, tf.id DESC LIMIT %s)",
    ], [*words, " ".join(words), shortlist]
