"""The episode store: similarity recall reads raw rows only; time-window reads return both kinds."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

from django.db.models import Q, QuerySet

from core.providers.embeddings import likeness
from core.providers.embeddings.base import pieces_of
from core.vectors import usable
from crewlet import config
from learning.memory import episode_search
from learning.models import Episode, EpisodePiece

if TYPE_CHECKING:
    from crewlet.models import Seat


def embed_text(*, label: str, ask: str, what_it_did: str) -> str:
    """ONE text per turn: what woke it, what it was asked, what it did (whole; split and pooled later).

    The label is counted once: a label the ask already carries (a subject sent as part of the
    message) is not repeated. The full-text index applies the same rule in SQL (migration 0005).
    """
    label, ask = label.strip(), ask.strip()
    if label and label in ask:
        label = ""
    return "\n".join(part for part in (label, ask, what_it_did.strip()) if part)


OPENING_LINES = 3  # lines of a turn's own messages searched each by its own vector: what was asked opens it
_SENDER = re.compile(r"([^\s:][^:\n]{0,59}): ")  # a message's "Name: " lead, as the episodist writes the ask


def own_lines(lines: list[str]) -> list[str]:
    """The lines of the ask's last sender: a message that starts ``Name: `` runs until the next one, and
    the trailing messages of the last sender are the turn's own; the messages of others before them
    were delivered with it as context (the message a chat reply answers). An ask of one sender, or
    one that does not open with a named message (free text, whose lines may lead with "Steps: "), is
    all its own."""
    starts = [(i, m.group(1)) for i, line in enumerate(lines) if (m := _SENDER.match(line))]
    if not starts or starts[0][0] != 0 or len({name for _, name in starts}) < 2:
        return lines
    last, cut = starts[-1][1], starts[-1][0]
    for i, name in reversed(starts):
        if name != last:
            break
        cut = i
    return lines[cut:]


def search_pieces(*, label: str, ask: str, what_it_did: str, max_chars: int) -> list[str]:
    """The opening lines of the ask's own messages (the label's line left out; ``own_lines``), each
    searched by its own vector (a line past the embedder's input is split between words). A long
    conversation's later lines answer the agent's questions ("yes", an id) and look like any query;
    what was asked is in its opening, and the whole text's pooled vector still stands for the rest --
    the context messages included. A message delivered as context is another turn's own message, and
    searched by its own lines there it would tie with that turn. A turn whose ask says nothing beyond its
    label is searched by its text's first line. A function of the row alone, so the fill recomputes
    the same pieces (and a turn with any text has at least one)."""
    label = label.strip()
    lines = own_lines([line for line in dict.fromkeys(line.strip() for line in ask.splitlines()) if line and line != label])
    if not lines:
        text = embed_text(label=label, ask=ask, what_it_did=what_it_did)
        lines = [line.strip() for line in text.splitlines() if line.strip()][:1]
    return [piece for line in lines[:OPENING_LINES] for piece in pieces_of(line, max_chars)]


def pieces_of_episode(episode: Episode, max_chars: int) -> list[str]:
    return search_pieces(label=episode.task_summary, ask=episode.ask, what_it_did=episode.plan_summary,
                         max_chars=max_chars)


def write_pieces(episode: Episode, pieces: list[str], vectors: list, model: str, *, replace: bool = True) -> int:
    """Replace the episode's line vectors (a piece with no usable vector is left out); ``replace=False``
    for an episode just inserted, which has none to delete."""
    if replace:
        EpisodePiece.objects.filter(episode=episode).delete()
    rows = [EpisodePiece(episode=episode, ordinal=i, embedding=list(v), embedding_model=model, embedding_dim=len(v))
            for i, (_piece, v) in enumerate(zip(pieces, vectors, strict=True)) if usable(v)]
    EpisodePiece.objects.bulk_create(rows)
    return len(rows)


def insert(episode: Episode) -> Episode:
    """A new episode's one INSERT."""
    episode.save(force_insert=True)
    return episode


def text_of(episode: Episode) -> str:
    return embed_text(label=episode.task_summary, ask=episode.ask, what_it_did=episode.plan_summary)


def raw(seat: Seat) -> QuerySet[Episode]:
    return Episode.objects.filter(seat=seat, kind=Episode.RAW)


class Recalled(NamedTuple):
    """What a recall found: the turns, most like the query first; whether the ranking was a close call (its
    best turns scored about alike: ``episode_search.close_call``); and whether none of them is like the query
    at all (the nearest turn below the model's ``similar_from``, ``core.providers.embeddings.likeness``, and
    no turn read holding every word of the query, ``episode_search.says_every_word``)."""

    turns: list[Episode]
    close_call: bool = False
    unlike: bool = False


def recall(*, seat: Seat, vector, model: str, query: str = "", limit: int = 3, outcome: str | None = None,
           ranked_words: list[tuple[int, float]] | None = None) -> Recalled:
    """Raw turns most like the query: its vector's ranking fused with its words' (episode_search; ``ranked_words``
    when the caller ranked them already). The ranking is read to ``CLOSE_CALL_RANK`` rows at least, to tell a
    close call; only ``limit`` turns are read."""
    if not vector:
        return Recalled([])
    ranking = episode_search.ranked(seat=seat, vector=vector, model=model, query=query,
                                    limit=max(limit, episode_search.CLOSE_CALL_RANK), outcome=outcome,
                                    ranked_words=ranked_words)
    ids = [i for i, _score in ranking.rows[:limit]]
    rows = Episode.objects.defer("embedding").in_bulk(ids)
    turns = [rows[i] for i in ids if i in rows]
    # nothing is like the query when its nearest turn is far by meaning and no turn read says all it asks about
    configured = config.current().providers.embeddings.similar_from
    unlike = likeness.unlike(ranking.nearest, model, configured) and not episode_search.says_every_word(query, map(text_of, turns))
    return Recalled(turns, episode_search.close_call([score for _i, score in ranking.rows]), unlike)


def recent(*, seat: Seat, limit: int = 10, outcome: str | None = None) -> list[Episode]:
    qs = Episode.objects.filter(seat=seat)
    if outcome:
        qs = qs.filter(review_outcome=outcome)
    return list(qs.order_by("-ended_at", "-id")[:limit])


def in_conversation(*, seat: Seat, conversation_id: str, limit: int = 10, outcome: str | None = None) -> list[Episode]:
    qs = Episode.objects.filter(seat=seat, conversation_id=conversation_id)
    if outcome:
        qs = qs.filter(review_outcome=outcome)
    return list(qs.order_by("-ended_at", "-id")[:limit])


def unreachable_count(*, seat: Seat, model: str, dim: int) -> int:
    """Raw rows a similarity search cannot reach yet: no vector of the current model and width."""
    return raw(seat).exclude(Q(embedding__isnull=False) & Q(embedding_model=model) & Q(embedding_dim=dim)).count()
