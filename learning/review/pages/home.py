"""The lead's home: what waits for review, which seats are below the Berlot-Attwell line, where to go."""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import reverse

from crewlet.models import Seat
from knowledge.review import review_queue
from learning.review import health
from learning.transcripts.models import Recommendation, Shard


@dataclass(frozen=True)
class Waiting:
    label: str
    count: int
    url: str


def waiting() -> list[Waiting]:
    """Drafts, transcript shards a person decides, and proposed recommendations: each counted and linked."""
    return [
        Waiting("auto-drafted pages", review_queue().count(), reverse("admin:knowledge_draftpage_changelist")),
        Waiting("transcript lessons awaiting a person", Shard.objects.filter(status=Shard.REVIEW).count(),
                reverse("admin:transcripts_shard_changelist") + f"?status__exact={Shard.REVIEW}"),
        Waiting("recommendations proposed", Recommendation.objects.filter(status=Recommendation.PROPOSED).count(),
                reverse("admin:transcripts_recommendation_changelist") + f"?status__exact={Recommendation.PROPOSED}"),
    ]


def home_context() -> dict:
    rows = health.seat_health()
    return {
        "waiting": waiting(),
        "flagged": [h for h in rows if h.flagged],
        "threshold": health.BERLOT_ATTWELL_THRESHOLD,
        "seats": Seat.objects.select_related("role", "unit").order_by("handle"),
    }
