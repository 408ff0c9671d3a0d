"""Hybrid similarity over a seat's raw episodes, ranked in SQL on both engines (``core.hybrid``).

- by meaning: a turn is as near to the query as the nearest of its vectors -- the whole text's
  pooled vector or one of its own messages' opening lines' (``episode_pieces``, compared for the pool only);
- by words: the query's content words (``core.words``) against the turn's label (once), ask
  and account -- SQLite FTS5 ``bm25`` over ``episodes_fts`` (whose words are the seat's own tokens,
  so a MATCH reads only the seat's rows), PostgreSQL BM25 over the seat's postings of the generated
  ``search_tsv`` column (``episodes_postings``, kept by triggers);
- fused by score: half the cosine min-max normalised over the pool, half the BM25 over the pool's
  best (``core.hybrid.WEIGHT``).

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


def ranked(*, seat: Seat, vector, model: str, query: str, limit: int, outcome: str | None = None) -> hybrid.Ranked:
    """The fused ranking of the seat's raw turns: ``(episode id, fused score)``, best first, and how near the
    nearest turn compared is (``core.hybrid.Ranked``)."""
    scope = ("t.seat_id = %s AND t.kind = 'raw' AND t.embedding IS NOT NULL AND t.embedding_model = %s"
             " AND t.embedding_dim = %s" + (" AND t.review_outcome = %s" if outcome else ""))
    params = [seat.pk, model, len(vector)] + ([outcome] if outcome else [])
    # the seat's raw turns with a vector are nearly all its turns (a consolidated one, one the fill has not reached
    # yet): a word's rarity is counted over the seat's, without reading them; a filter on the outcome may leave
    # most out, and has it counted over the turns it keeps
    return hybrid.search(CORPUS, scope=scope, scope_params=params, vector=vector, model=model,
                         words=search_words(query), limit=limit, seat=seat.pk, max_distance=RECALL_MAX_DISTANCE,
                         seat_counts=outcome is None)
