"""Hybrid similarity over a seat's raw episodes, ranked in SQL on both engines (``core.hybrid``).

- by meaning: a turn is as near to the query as the nearest of its vectors -- the whole text's
  pooled vector or one of its own messages' opening lines' (``episode_pieces``, compared for the pool only);
- by words: the query's content words (``learning.words``) against the turn's label (once), ask
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

from typing import TYPE_CHECKING

from core import hybrid
from learning.words import search_words

if TYPE_CHECKING:
    from crewlet.models import Seat

RECALL_MAX_DISTANCE = 0.9
CORPUS = hybrid.Corpus(table="episodes", fts="episodes_fts", fts_weights="1.0", seat_tokens=True,
                       postings="episodes_postings",
                       pieces=hybrid.Pieces(table="episode_pieces", fk="episode_id"),
                       text="(CASE WHEN strpos(t.ask, t.task_summary) > 0 THEN '' ELSE t.task_summary END)"
                            " || ' ' || t.ask || ' ' || t.plan_summary")


def ranked(*, seat: Seat, vector, model: str, query: str, limit: int, outcome: str | None = None) -> list[tuple[int, float]]:
    """``(episode id, fused score)``, best first: the fused ranking of the seat's raw turns."""
    scope = ("t.seat_id = %s AND t.kind = 'raw' AND t.embedding IS NOT NULL AND t.embedding_model = %s"
             " AND t.embedding_dim = %s" + (" AND t.review_outcome = %s" if outcome else ""))
    params = [seat.pk, model, len(vector)] + ([outcome] if outcome else [])
    # the seat's raw turns with a vector are nearly all its turns (a consolidated one, one the fill has not reached
    # yet): a word's rarity is counted over the seat's, without reading them; a filter on the outcome may leave
    # most out, and has it counted over the turns it keeps
    return hybrid.ranked(CORPUS, scope=scope, scope_params=params, vector=vector, model=model,
                         words=search_words(query), limit=limit, seat=seat.pk, max_distance=RECALL_MAX_DISTANCE,
                         seat_counts=outcome is None)
