"""The embedding fill's second half: opening-line vectors (``episode_pieces``) for raw turns whose whole-text
vector is of the current model but whose lines have none of it yet (a turn embedded by the fill, or
one written before the hybrid search existed). Sent through the same minute as the rows, so the
provider's request and byte limits hold; a refused or unusable line costs only that turn, held an hour
(a turn whose lines were refused alone is offered alone again after it, like a row).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from django.db.models import Exists, OuterRef, Q

from core.providers.errors import RefusedError
from core.vectors import usable
from learning.memory import episodes
from learning.models import EpisodePiece
from learning.passes.fill_requests import ALONE, HOLD, MAX_INPUTS_PER_REQUEST, Minute, refused_alone

if TYPE_CHECKING:
    from crewlet.models import Seat

log = logging.getLogger("learning.passes.embed_fill")

PAGE = 200


def lacking_pieces(seat: Seat, *, model: str, dim: int, now):
    has = EpisodePiece.objects.filter(episode=OuterRef("pk"), embedding_model=model, embedding_dim=dim)
    return (episodes.raw(seat).filter(embedding_model=model, embedding_dim=dim, embedding__isnull=False)
            .filter(Q(embed_held_until__isnull=True) | Q(embed_held_until__lte=now))
            .exclude(Exists(has)))


def fill_pieces(seat: Seat, minute: Minute) -> int:
    """Embed the lines of up to a page of the seat's turns, many turns a request within the per-request
    share; RanOut/EndMinute end the minute as they do for rows."""
    embedder, filled = minute.embedder, 0
    batch: list[tuple[Any, list[str]]] = []

    def flush() -> int:
        if not batch:
            return 0
        done = _send(list(batch), minute)
        batch.clear()
        return done

    for episode in lacking_pieces(seat, model=embedder.model, dim=embedder.dim, now=minute.now).order_by("pk")[:PAGE]:
        pieces = episodes.pieces_of_episode(episode, embedder.max_input_chars)
        size = sum(len(p.encode()) for _, ps in batch for p in ps) + sum(len(p.encode()) for p in pieces)
        count = sum(len(ps) for _, ps in batch) + len(pieces)
        if batch and (size > minute.request_bytes or count > MAX_INPUTS_PER_REQUEST or refused_alone(episode)):
            filled += flush()
        batch.append((episode, pieces))
        if refused_alone(episode):  # refused alone before: sent alone
            filled += flush()
    filled += flush()
    minute.report["pieces_filled"] = minute.report.get("pieces_filled", 0) + filled
    return filled


def _send(batch: list, minute: Minute) -> int:
    texts = [p for _, pieces in batch for p in pieces]
    refused = False
    try:
        vectors = [v for start in range(0, len(texts), MAX_INPUTS_PER_REQUEST)
                   for v in minute.request(texts[start : start + MAX_INPUTS_PER_REQUEST])]
    except RefusedError:
        if len(batch) > 1:
            half = len(batch) // 2
            return _send(batch[:half], minute) + _send(batch[half:], minute)
        vectors, refused = [], True
    filled, at = 0, 0
    for episode, pieces in batch:
        mine, at = vectors[at : at + len(pieces)], at + len(pieces)
        if not pieces or len(mine) != len(pieces) or not all(usable(v) for v in mine):
            marks = {"embed_pieces": ALONE} if refused else {}
            type(episode).objects.filter(pk=episode.pk).update(embed_held_until=minute.now + HOLD, **marks)
            log.warning("embedding fill: the lines of episode:%s could not be embedded; held back", episode.pk)
            continue
        episodes.write_pieces(episode, pieces, mine, minute.embedder.model)
        if refused_alone(episode):
            type(episode).objects.filter(pk=episode.pk).update(embed_pieces=None)
        filled += 1
    return filled
