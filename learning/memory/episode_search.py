"""Hybrid search over a seat's raw episodes (``core.hybrid``): a meaning and a words ranking, fused by score.

- by meaning: the turn's pooled vector, and the nearest of its own lines' vectors (``episode_pieces``);
- by words: the query's content words (``core.words``) against the turn's label, ask and account
  (the generated ``search_tsv`` column).

Only the seat's raw turns with a vector of the query's model and width are reached, and only ids and
scores come back, never vectors.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from core import hybrid
from core.words import search_words, stem, words

if TYPE_CHECKING:
    from crewlet.models import Seat

RECALL_MAX_DISTANCE = 0.9  # cosine distance past which a turn takes no place by meaning
CLOSE_CALL_RANK = 5
CLOSE_CALL_GAP = 0.2  # a fifth of the fused score's range; bench/recall.py prints what the warning is worth
CORPUS = hybrid.Corpus(table="episodes", pieces=hybrid.Pieces(table="episode_pieces", fk="episode_id"))


def close_call(scores: Sequence[float]) -> bool:
    """True when no turn stands out: the first's fused score (0 to 1) is within ``CLOSE_CALL_GAP`` of the
    ``CLOSE_CALL_RANK``-th's. A ranking of fewer rows is not judged."""
    return len(scores) >= CLOSE_CALL_RANK and scores[0] - scores[CLOSE_CALL_RANK - 1] < CLOSE_CALL_GAP


def says_every_word(query: str, texts: Iterable[str]) -> bool:
    """True when one of ``texts`` holds every content word of ``query`` (plurals folded): a turn that names all
    a query asks about is like it, however far apart their vectors (a short query of codes and names sits far
    from every whole turn in a sentence model's space)."""
    asked = {stem(w) for w in search_words(query)}
    return bool(asked) and any(asked <= {stem(w) for w in words(text)} for text in texts)


def _scope(seat: Seat, model: str, dim: int, outcome: str | None) -> tuple[str, list]:
    """The seat's raw turns with a vector of the query's model and width (and ``outcome``): what a recall
    reaches, by meaning and by words alike (``episodes.unreachable_count`` counts the rest)."""
    scope = ("t.seat_id = %s AND t.kind = 'raw' AND t.embedding_model = %s AND t.embedding_dim = %s"
             + (" AND t.review_outcome = %s" if outcome else ""))
    return scope, [seat.pk, model, dim] + ([outcome] if outcome else [])


def ranked(*, seat: Seat, vector, model: str, query: str, limit: int, outcome: str | None = None,
           ranked_words: list[tuple[int, float]] | None = None) -> hybrid.Ranked:
    """The fused ranking of the seat's raw turns: ``(episode id, fused score)``, best first, and how near the
    nearest turn compared is (``core.hybrid.Ranked``). ``ranked_words`` is ``by_words``'s ranking of the same
    query, model and width when the caller made it already."""
    scope, params = _scope(seat, model, len(vector), outcome)
    return hybrid.search(CORPUS, scope=scope, scope_params=params, vector=vector, model=model,
                         words=search_words(query), limit=limit, max_distance=RECALL_MAX_DISTANCE,
                         ranked_words=ranked_words)


def by_words(*, seat: Seat, model: str, dim: int, query: str, outcome: str | None = None,
             shortlist: int = hybrid.SHORTLIST) -> list[tuple[int, float]]:
    """The words half of ``ranked`` (``shortlist``: its limit, when more than ``core.hybrid.SHORTLIST``): it
    needs no vector, only the model and width the query's vector will have."""
    scope, params = _scope(seat, model, dim, outcome)
    return hybrid.by_words(CORPUS, scope=scope, scope_params=params, words=search_words(query), shortlist=shortlist)
