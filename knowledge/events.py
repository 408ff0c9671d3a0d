"""The events the knowledge app publishes: searches read and drafts decided."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from core.event_types import JSON, EventPayload


class KnowledgePageRef(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    page_id: str
    title: str = ""
    container_key: str = ""


class KnowledgeRead(EventPayload):
    """A knowledge search and the pages it reached. ``via``: search_knowledge, relevant_knowledge (the prefetch), ..."""

    NAME = "knowledge_read"
    RETENTION = "turn_telemetry"

    via: str
    query: str = ""
    served_mode: str = ""
    unavailable: str = ""
    pages: list[KnowledgePageRef] = Field(default_factory=list)


class _DraftDecision(EventPayload):
    RETENTION = "audit"
    BEST_EFFORT = False

    user: str
    page_id: int
    page_title: str
    container_key: str = ""
    skills: list[JSON] = Field(default_factory=list)
    seats: list[JSON] = Field(default_factory=list)


class KnowledgeDraftPublished(_DraftDecision):
    NAME = "knowledge_draft_published"

    parent_id: int | None = None
    embedding: str = ""


class KnowledgeDraftRejected(_DraftDecision):
    NAME = "knowledge_draft_rejected"
