"""``POST /turns``: the ``turn_completed`` record (seat token). 202 with the turn id when new, 200 on a repeat.

Everything the reflection gates read rides on this record, because a field left off it is a fact
no worker can consult; so unknown fields are refused rather than silently dropped, and every bad
field is named in the 422 (crewlet.api's validation handler). Nothing partial is stored.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from ninja import Field, Router, Schema, Status
from pydantic import ConfigDict, ValidationInfo, field_validator, model_validator

from crewlet.api_input import InputSchema
from crewlet.auth import require_seat, seat_auth
from crewlet.errors import error_responses
from learning import turns
from learning.limits import (
    MAX_ASK_CHARS,
    MAX_INTERACTIONS,
    MAX_LABEL_CHARS,
    MAX_SKILLS_OFFERED,
    MAX_TOOL_CALLS,
)
from learning.tools.base import Text

router = Router(tags=["turns"])

ConversationKind = Literal["chat", "tracker", "code_host", "wiki", "monitor", "cron", "schedule", "a2a", "internal", "sandbox"]
ReviewOutcome = Literal["done", "failed", "self_iterate", "skipped"]
ToolName = Annotated[Text, Field(max_length=200)]
FailureSetBy = Literal["reviewer", "guard", "budget", "provider_chain"]


class SenderIn(InputSchema):
    """A resolved sender: a handle or an external id, on a platform."""

    model_config = ConfigDict(extra="forbid")

    handle: Text = Field("", max_length=200)
    external_id: Text = Field("", max_length=200)
    platform: Text = Field("", max_length=60)
    display_name: Text = Field("", max_length=200)
    kind: Literal["human", "agent", "bot"] = "human"

    @model_validator(mode="after")
    def _identified(self):
        if not (self.handle or self.external_id):
            raise ValueError("a sender needs a handle or an external_id")
        return self


class InteractionIn(InputSchema):
    """One inbound message: its sender and its salient body (the message, no scaffolding)."""

    model_config = ConfigDict(extra="forbid")

    sender: SenderIn
    body: Text = Field(max_length=MAX_ASK_CHARS)
    at: datetime | None = Field(None, strict=False)


class TurnIn(InputSchema):
    """The ``turn_completed`` record."""

    model_config = ConfigDict(extra="forbid")

    run_id: Text = Field(min_length=1, max_length=200)
    work_key: Text = Field("", max_length=200)
    seat: Text = Field(min_length=1, max_length=100)
    conversation_id: Text = Field("", max_length=300)
    conversation_kind: ConversationKind
    label: Text = Field("", max_length=MAX_LABEL_CHARS, description="The waking event's label (what kind of event woke the turn).")
    subject_is_label: bool = Field(False, description="The subject is only the surface's name, not part of what was sent.")
    ask: Text = Field("", max_length=MAX_ASK_CHARS, description="What the turn was asked, for a wake with no interactions.")
    plan_summary: Text = Field("", max_length=MAX_ASK_CHARS, description="What it did: the last review's account, or the final answer.")
    tool_sequence: list[ToolName] = Field(default_factory=list, max_length=MAX_TOOL_CALLS, description="The final round's tools, in order.")
    tools_called: list[ToolName] = Field(default_factory=list, max_length=MAX_TOOL_CALLS, description="Every tool call of the turn, in order.")
    review_outcome: ReviewOutcome
    failure_set_by: FailureSetBy | None = None
    failure_reason: Text = Field("", max_length=MAX_ASK_CHARS)
    skills_offered: list[Annotated[int, Field(ge=1, le=2**63 - 1)]] = Field(default_factory=list, max_length=MAX_SKILLS_OFFERED, description="Skill ids the prompt offered.")
    interactions: list[InteractionIn] = Field(default_factory=list, max_length=MAX_INTERACTIONS)
    self_persisted: bool = False
    worker_completed: bool = False
    work_item: Text = Field("", max_length=200)
    schedule: Text = Field("", max_length=200, description="A scheduled turn's schedule name.")
    started_at: datetime | None = Field(None, strict=False)
    ended_at: datetime | None = Field(None, strict=False)
    duration_ms: int | None = Field(None, ge=0)

    @field_validator("failure_set_by")
    @classmethod
    def _failure_only_on_failed(cls, value, info: ValidationInfo):
        if value is not None and info.data.get("review_outcome") != "failed":
            raise ValueError("failure_set_by is set only when review_outcome is failed")
        return value

    @field_validator("ended_at")
    @classmethod
    def _ends_after_start(cls, value, info: ValidationInfo):
        started = info.data.get("started_at")
        if value is not None and started is not None and value < started:
            raise ValueError("ended_at is before started_at")
        return value


class TurnAccepted(Schema):
    turn_id: int
    run_id: str
    status: Literal["accepted", "duplicate"]


@router.post("/turns", auth=seat_auth, response={200: TurnAccepted, 202: TurnAccepted,
                                                   **error_responses(400, 401, 403, 409, 413, 422)})
def post_turn(request, payload: TurnIn):
    seat = require_seat(request, payload.seat)
    turn, created = turns.store_turn(seat=seat, record=payload.model_dump(mode="json"))
    status = "accepted" if created else "duplicate"
    return Status(202 if created else 200, TurnAccepted(turn_id=turn.pk, run_id=turn.run_id, status=status))
