"""Hybrid similarity over a seat's raw episodes, ranked in SQL on both engines (``core.hybrid``).

- by meaning: a turn is as near to the query as the nearest of its vectors -- the whole text's
  pooled vector or one of its own messages' opening lines' (``episode_pieces``, compared for the pool only);
- by words: the query's content words (``core.words``) against the turn's label (once), ask
  and account -- SQLite FTS5 ``bm25`` over ``episodes_fts`` (whose words are the seat's own tokens,
  so a MATCH reads only the seat's rows), PostgreSQL BM25 over the seat's postings of the generated
  ``search_tsv`` column (``episodes_postings``, kept by triggers);
- fused by score: half the cosine min-max normalised over the pool, half the BM25 over the pool's
  best (``core.hybrid.WEIGHT``);
- one place in five of a recall (``NEAREST_EVERY``: the fifth and the tenth of ten, the fifth of five, none
  of the turn start's three) is held for the turns nearest the query by meaning through their own lines
  (``nearest_by_meaning``): the nearest is among the first five, the second nearest among the first ten
  (``with_nearest``).

Both halves read only the seat's raw rows with a vector of the query's model and width (the
same reach as before: ``unreachable_count`` stays the count of what no search can return), and
answer ids with scores -- never vectors.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from core import hybrid
from core.words import search_words, stem, words

if TYPE_CHECKING:
    from crewlet.models import Seat

RECALL_MAX_DISTANCE = 0.9
# A close call: the best turn's fused score within CLOSE_CALL_GAP of the CLOSE_CALL_RANK-th's -- the query
# names nothing that sets one past turn apart ("I'd like to change my flight"), and the recall says so.
# bench/recall.py prints what the warning is worth: how often the first turn answered was right, among the
# close calls and among the rest. On the dev data (SQLite / PostgreSQL):
#   tau-bench, each trial in turn the query: 0.19 / 0.37 of the 31 / 30 close calls of 100, 0.88 / 0.87 of the
#     rest; on the issue's split alone (the 4th trials' openings, the specific ones) 5 of 6 / 4 of 5 were right;
#   LoCoMo (a turn of an evidence session): 0.47 / 0.55 of the 88 / 83 close calls of 302, 0.86 / 0.84 of the
#     rest.
# By the gap itself (a lab run, tau-bench / LoCoMo sessions): under 0.1 0.13 / 0.44, 0.1-0.2 0.28 / 0.51,
# 0.2-0.3 0.82 / 0.68, 0.3-0.4 0.80 / 0.93, above 1.00 / 0.94. In a seat of few turns the pool is the whole
# seat and the min-max normalisation spreads its scores: a close call is rarely called there.
CLOSE_CALL_RANK = 5
CLOSE_CALL_GAP = 0.2
CORPUS = hybrid.Corpus(table="episodes", fts="episodes_fts", fts_weights="1.0", seat_tokens=True,
                       postings="episodes_postings",
                       pieces=hybrid.Pieces(table="episode_pieces", fk="episode_id"),
                       text="(CASE WHEN strpos(t.ask, t.task_summary) > 0 THEN '' ELSE t.task_summary END)"
                            " || ' ' || t.ask || ' ' || t.plan_summary")


def close_call(scores: Sequence[float]) -> bool:
    """True when a ranking's best does not stand out (the fused scores, best first): its first score is within
    ``CLOSE_CALL_GAP`` of its ``CLOSE_CALL_RANK``-th. A ranking of fewer rows is not judged."""
    return len(scores) >= CLOSE_CALL_RANK and scores[0] - scores[CLOSE_CALL_RANK - 1] < CLOSE_CALL_GAP


def says_every_word(query: str, texts: Iterable[str]) -> bool:
    """True when one of ``texts`` holds every content word of ``query`` (plurals folded): a turn that names all a
    query asks about is like it, however far apart their vectors -- a short query of specifics ("IAH SEA",
    "HXDUBJ nonstop") sits far from every whole turn in the model's space (similarity 0.36-0.38 on the
    tau-bench dev seat) while the turns about them say both words. On the dev data a query asked of the other
    set's seats never had a returned turn holding more than two thirds of its words."""
    asked = {stem(w) for w in search_words(query)}
    return bool(asked) and any(asked <= {stem(w) for w in words(text)} for text in texts)


# Why places are held (a lab over the recall bench's stored seats, SQLite, LoCoMo 302 questions / tau-bench 25;
# bench/recall.py prints the figures): a turn whose own message is the nearest by meaning of all the seat's turns,
# but whose pooled vector is diluted by what it carried (the message it answered, its reply), is neither in the
# vector half's shortlist nor matched by the query's words -- "Would Melanie be more interested in a national park
# or a theme park?" is answered by two turns about camping, nearest through their own lines, past 30th by their
# pooled vectors, while the turns that say "park" fill the fused top 10. The nearest among the first five and the
# second nearest among the first ten: LoCoMo R@10 0.838 -> 0.858 (multi-hop 27 -> 30 of 43, open-domain 7 -> 8 of
# 11, single-hop 95 -> 96, adversarial 64 -> 65, temporal the same), R@5 0.745 -> 0.752, R@1 the same, tau-bench
# the same. Measured and not taken: the two in the last two places (R@10 the same, R@5 unchanged); three places of
# ten (0.848); a line's or the pooled vector's distance, whichever nearer (the same top two as the lines alone); the
# nearest by pooled vector alone (0.834); the nearest within the vector half's own pool, no scan of the lines
# (0.844, open-domain 7).
NEAREST_EVERY = 5


def held_places(limit: int) -> int:
    """How many of a recall's ``limit`` places are held for the nearest by meaning: one in ``NEAREST_EVERY``."""
    return limit // NEAREST_EVERY


def nearest_by_meaning(*, seat: Seat, vector, model: str, k: int, outcome: str | None = None) -> list[int]:
    """The ``k`` raw turns nearest the query by the nearest of their own lines (``episode_pieces``), nearest first,
    none farther than ``RECALL_MAX_DISTANCE``; the same reach as ``ranked`` (``core.hybrid.nearest_by_meaning``)."""
    scope, params = _scope(seat, model, len(vector), outcome)
    return [i for i, _d in hybrid.nearest_by_meaning(CORPUS, scope=scope, scope_params=params, vector=vector,
                                                      model=model, k=k, max_distance=RECALL_MAX_DISTANCE)]


def with_nearest(ids: Sequence[int], nearest: Sequence[int], limit: int) -> list[int]:
    """The fused ranking's first ``limit`` ids with the ``j``-th of ``nearest`` among the first ``NEAREST_EVERY x j``
    places: where it is not, it is moved (or put) at the last of those places and the fused ids after it move
    down one, the last falling out past ``limit``."""
    out = list(ids[:limit])
    for j, row in enumerate(nearest, start=1):
        place = min(NEAREST_EVERY * j, limit)
        if row in out[:place]:
            continue
        if row in out:
            out.remove(row)
        out.insert(place - 1, row)
        out = out[:limit]
    return out


def _scope(seat: Seat, model: str, dim: int, outcome: str | None) -> tuple[str, list]:
    """The seat's raw turns with a vector of the query's model and width (and ``outcome``): what a recall reaches."""
    scope = ("t.seat_id = %s AND t.kind = 'raw' AND t.embedding IS NOT NULL AND t.embedding_model = %s"
             " AND t.embedding_dim = %s" + (" AND t.review_outcome = %s" if outcome else ""))
    return scope, [seat.pk, model, dim] + ([outcome] if outcome else [])


def ranked(*, seat: Seat, vector, model: str, query: str, limit: int, outcome: str | None = None) -> hybrid.Ranked:
    """The fused ranking of the seat's raw turns: ``(episode id, fused score)``, best first, and how near the
    nearest turn compared is (``core.hybrid.Ranked``)."""
    scope, params = _scope(seat, model, len(vector), outcome)
    # the seat's raw turns with a vector are nearly all its turns (a consolidated one, one the fill has not reached
    # yet): a word's rarity is counted over the seat's, without reading them; a filter on the outcome may leave
    # most out, and has it counted over the turns it keeps
    return hybrid.search(CORPUS, scope=scope, scope_params=params, vector=vector, model=model,
                         words=search_words(query), limit=limit, seat=seat.pk, max_distance=RECALL_MAX_DISTANCE,
                         seat_counts=outcome is None)
