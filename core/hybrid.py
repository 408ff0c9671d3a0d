"""Hybrid search in PostgreSQL: a ranking by meaning and a ranking by words, fused by score.

Two statements rank the rows of a scope two ways, each cut to a shortlist:

- by meaning: a row is as near the query as the nearest of its vectors -- its own (pgvector cosine
  distance) or, for a corpus with pieces (an episode's own lines), any of its pieces';
- by words: BM25 over the query's content words, against the row's generated ``tsvector``. A word
  counts once per row (binary term frequency: the texts are short), weighted by its rarity in the
  scope, and a row's length is normalised against the average of the rows that match.

The two shortlists are pooled and fused, in Python, by a convex combination of normalised scores: ``WEIGHT`` x the
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
    """The statement of the meaning ranking: ``(id, d)``, the shortlist nearest rows by the nearest of their vectors.

    Distances are written against the column cast to the query's width (``distance_sql``), so an
    approximate index of that width (``core.vectors.ensure_index``) can serve the ordering; a row's
    pieces are read nearest first and grouped after, so that index serves them too."""
    qv, dim = to_pg_text(vector), len(vector)
    own = (f"SELECT t.id, {distance_sql('t', dim)} AS d FROM {corpus.table} t"
           f" WHERE ({scope}) AND t.embedding IS NOT NULL AND t.embedding_model = %s AND t.embedding_dim = {dim}"
           f" ORDER BY d LIMIT {shortlist}")
    params = [qv, *scope_params, model]
    if corpus.pieces is None:
        return own, params
    p = corpus.pieces
    lines = (f"SELECT p.{p.fk} AS id, {distance_sql('p', dim)} AS d FROM {p.table} p"
             f" JOIN {corpus.table} t ON t.id = p.{p.fk}"
             f" WHERE ({scope}) AND p.embedding_model = %s AND p.embedding_dim = {dim}"
             f" ORDER BY d LIMIT {PIECES_PER_ROW * shortlist}")
    params += [qv, *scope_params, model]
    sql = (f"SELECT id, MIN(d) AS d FROM (({own}) UNION ALL ({lines})) u"
           f" GROUP BY id ORDER BY d, id DESC LIMIT {shortlist}")
    return sql, params


def _words(corpus: Corpus, scope: str, scope_params: Sequence, words: Sequence[str],
           shortlist: int) -> tuple[str, list]:
    """The statement of the BM25 ranking, ``(id, r)`` best first: the scope's size, the rows matching any word
    with a column per word (whether it holds that word), each word's rows and the rows' average length among
    them (it stands for the scope's: the counts stay an index read), and each row's sum of its words' weights.

    Each word is its own ``to_tsquery`` (a bare word reads as its lexeme; a stopword matches nothing). Django
    binds parameters on the client, so each word reaches the planner as a literal and is parsed once, not
    once a row."""
    hit = [f"(t.search_tsv @@ to_tsquery('english', %s)) AS h{i}" for i in range(len(words))]
    df = [f"COUNT(*) FILTER (WHERE h{i})::float8 AS d{i}" for i in range(len(words))]
    idf = [f"ln(1 + (s.n - df.d{i} + 0.5) / (df.d{i} + 0.5)) AS w{i}" for i in range(len(words))]
    weight = " + ".join(f"CASE WHEN m.h{i} THEN i.w{i} ELSE 0 END" for i in range(len(words)))
    sql = (f"WITH stats AS MATERIALIZED (SELECT COUNT(*)::float8 AS n FROM {corpus.table} t WHERE ({scope})),"
           f" matched AS MATERIALIZED (SELECT t.id, t.search_len AS len, {', '.join(hit)} FROM {corpus.table} t"
           f" WHERE ({scope}) AND t.search_tsv @@ to_tsquery('english', %s)),"
           f" df AS (SELECT {', '.join(df)}, GREATEST(AVG(len), 1)::float8 AS avgdl FROM matched),"
           f" idf AS MATERIALIZED (SELECT {', '.join(idf)}, df.avgdl FROM df, stats s)"
           f" SELECT m.id, ({weight}) * {BM25_K1 + 1!r}::float8 / (1 + {BM25_K1!r}::float8 * ({1 - BM25_B!r}::float8"
           f" + {BM25_B!r}::float8 * m.len / i.avgdl)) AS r FROM matched m, idf i"
           f" ORDER BY r DESC, m.id DESC LIMIT {shortlist}")
    params = [*scope_params, *words, *scope_params, " | ".join(words)]
    return sql, params


def _rows(sql: str, params: list) -> list[tuple[int, float]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [(int(i), float(x)) for i, x in cursor.fetchall()]


def by_meaning(corpus: Corpus, *, scope: str, scope_params: Sequence, vector: Sequence[float], model: str,
               shortlist: int = SHORTLIST) -> list[tuple[int, float]]:
    """``(row id, cosine distance)`` of the ``shortlist`` rows of ``scope`` nearest ``vector``, nearest first."""
    return _rows(*_meaning(corpus, scope, scope_params, vector, model, shortlist))


def by_words(corpus: Corpus, *, scope: str, scope_params: Sequence, words: Sequence[str],
             shortlist: int = SHORTLIST) -> list[tuple[int, float]]:
    """``(row id, BM25 score)`` of the ``shortlist`` best rows of ``scope`` for ``words``, best first.

    It needs no vector: a caller may rank by words while the query embeds, and hand the ranking to ``search``."""
    return _rows(*_words(corpus, scope, scope_params, words, shortlist)) if words else []


def fuse(meaning: Sequence[tuple[int, float]], words: Sequence[tuple[int, float]], *, weight: float, limit: int,
         max_distance: float | None = None) -> Ranked:
    """The pool of both rankings fused: ``weight`` x a row's similarity min-max normalised over the pool,
    plus ``1 - weight`` x its BM25 score over the pool's best; ties go to the newest id."""
    sim = {i: 1.0 - d for i, d in meaning if max_distance is None or d <= max_distance}
    bm25 = dict(words)
    lo, hi = (min(sim.values()), max(sim.values())) if sim else (0.0, 0.0)
    best = max(bm25.values(), default=0.0)

    def score(i: int) -> float:
        by_meaning = 0.0 if i not in sim else (sim[i] - lo) / (hi - lo) if hi > lo else 1.0
        by_words = bm25.get(i, 0.0) / best if best > 0 else 0.0
        return weight * by_meaning + (1 - weight) * by_words

    pool = sim.keys() | bm25.keys()
    rows = sorted(((i, score(i)) for i in pool), key=lambda row: (row[1], row[0]), reverse=True)[: int(limit)]
    return Ranked(rows, min((d for _i, d in meaning), default=None))


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
    ranked_words: Sequence[tuple[int, float]] | None = None,
) -> Ranked:
    """The best ``limit`` rows of ``scope`` (a WHERE clause over the corpus table aliased ``t``).

    ``vector`` None ranks by words alone; no ``words`` ranks by meaning alone. Ties go to the newest id.
    ``words`` are content words (letters and digits only, as ``core.words.search_words`` gives them);
    ``ranked_words`` is their ranking when the caller has it already (``by_words``, same scope).
    """
    if vector is None and not words:
        return Ranked([], None)
    shortlist = max(SHORTLIST, int(limit))
    meaning = [] if vector is None else by_meaning(corpus, scope=scope, scope_params=scope_params, vector=vector,
                                                   model=model, shortlist=shortlist)
    if ranked_words is None:
        ranked_words = by_words(corpus, scope=scope, scope_params=scope_params, words=words, shortlist=shortlist)
    weight = WEIGHT if vector is not None and words else (1.0 if vector is not None else 0.0)
    return fuse(meaning, ranked_words, weight=weight, limit=limit, max_distance=max_distance)
