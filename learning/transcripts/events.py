"""The events the transcripts app publishes: shards judged and decided, lessons and recommendations."""

from __future__ import annotations

from pydantic import Field

from core.event_types import JSON, EventPayload


class ShardDecided(EventPayload):
    NAME = "shard_decided"
    RETENTION = "audit"

    shard_id: int
    status: str
    reason: str = ""


class ShardJudged(EventPayload):
    NAME = "shard_judged"
    RETENTION = "audit"

    shard_id: int
    kept: bool
    reason: str = ""
    submitted_by: str = ""


class ShardRejected(EventPayload):
    NAME = "shard_rejected"
    RETENTION = "audit"

    shard_id: int
    by: str
    actor: str = ""


class LessonMissed(EventPayload):
    NAME = "lesson_missed"
    RETENTION = "pass_reports"

    shard_id: int
    later_sessions: int


class ArtifactRetirementProposed(EventPayload):
    NAME = "artifact_retirement_proposed"
    RETENTION = "pass_reports"

    recommendation_id: int
    later_sessions: int


class RecommendationReviewed(EventPayload):
    NAME = "recommendation_reviewed"
    RETENTION = "audit"

    recommendation_id: int
    approve: bool
    actor: str = ""
    wrote_bytes: int = 0


class RecommendationInstalled(EventPayload):
    NAME = "recommendation_installed"
    RETENTION = "audit"

    recommendation_id: int
    path: str
    wrote_bytes: int
    actor: str = ""


class TranscriptsAdminAction(EventPayload):
    NAME = "transcripts_admin_action"
    RETENTION = "audit"

    action: str
    object_id: int
    user: str
    result: dict[str, JSON] = Field(default_factory=dict)
