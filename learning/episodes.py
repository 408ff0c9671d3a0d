"""The episode store: similarity recall reads raw rows only; time-window reads return both kinds."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from core.vectors import nearest_rows
from learning.models import Episode

RECALL_MAX_DISTANCE = 0.9


def embed_text(*, label: str, ask: str, what_it_did: str) -> str:
    """ONE text per turn: what woke it, what it was asked, what it did (whole; split and pooled later)."""
    return "\n".join(part for part in (label.strip(), ask.strip(), what_it_did.strip()) if part)


def text_of(episode: Episode) -> str:
    return embed_text(label=episode.task_summary, ask=episode.ask, what_it_did=episode.plan_summary)


def raw(seat) -> QuerySet[Episode]:
    return Episode.objects.filter(seat=seat, kind=Episode.RAW)


def recall(*, seat, vector, model: str, limit: int = 3, outcome: str | None = None) -> list[Episode]:
    """Raw turns most similar to ``vector`` (a compacted row reads like one turn that did all of them)."""
    if not vector:
        return []
    qs = raw(seat)
    if outcome:
        qs = qs.filter(review_outcome=outcome)
    return nearest_rows(qs, vector, model, limit=limit, max_distance=RECALL_MAX_DISTANCE)


def recent(*, seat, limit: int = 10, outcome: str | None = None) -> list[Episode]:
    qs = Episode.objects.filter(seat=seat)
    if outcome:
        qs = qs.filter(review_outcome=outcome)
    return list(qs.order_by("-ended_at", "-id")[:limit])


def in_conversation(*, seat, conversation_id: str, limit: int = 10, outcome: str | None = None) -> list[Episode]:
    qs = Episode.objects.filter(seat=seat, conversation_id=conversation_id)
    if outcome:
        qs = qs.filter(review_outcome=outcome)
    return list(qs.order_by("-ended_at", "-id")[:limit])


def unreachable_count(*, seat, model: str, dim: int) -> int:
    """Raw rows a similarity search cannot reach yet: no vector of the current model and width."""
    return raw(seat).exclude(Q(embedding__isnull=False) & Q(embedding_model=model) & Q(embedding_dim=dim)).count()
