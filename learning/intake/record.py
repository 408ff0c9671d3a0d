"""The turn record: one typed schema from ``POST /api/v1/turns`` to the reflection workers.

The same ``Sender``, ``Interaction`` and ``ConversationKind`` describe a turn's trigger at turn start
(the prefetch request) and after it (the ``turn_completed`` record), and ``derive_ask`` is the one rule
for what the turn was asked, so the ask the prefetch embedded is the ask reflection stores.

Everything the reflection gates read rides on this record, because a field left off it is a fact no
worker can consult; so an unknown field is refused at the API edge rather than silently dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from core.scrub import scrub_secrets
from learning.limits import (
    EARLIEST_TIME,
    LATEST_TIME,
    MAX_DURATION_MS,
    MAX_INTERACTIONS,
    MAX_LABEL_CHARS,
    MAX_ROW_ID,
    MAX_SKILLS_OFFERED,
    MAX_TEXT_CHARS,
    MAX_TOOL_CALLS,
)


def _clean_text(value: str) -> str:
    """Text a database can store as given: no NUL characters, no lone surrogates."""
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be valid Unicode text (no lone surrogates)") from None
    return value


Text = Annotated[str, AfterValidator(_clean_text)]
ToolName = Annotated[Text, Field(max_length=200)]
SkillId = Annotated[int, Field(ge=1, le=MAX_ROW_ID)]
def _time_as_text(value):
    """A number is not a time here (lenient parsing would read it as a Unix timestamp the schema never offered)."""
    if isinstance(value, (int, float)):
        raise ValueError("a time is an ISO 8601 string, not a number")
    return value


_EARLIEST, _LATEST = datetime.fromisoformat(EARLIEST_TIME), datetime.fromisoformat(LATEST_TIME)


def _time_in_range(value: datetime | None) -> datetime | None:
    """A time the database stores and the passes compute with (a time without an offset is read as UTC)."""
    if value is None:
        return value
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    try:
        inside = _EARLIEST <= aware <= _LATEST  # an offset that carries it past year 9999 cannot even compare
    except OverflowError:
        inside = False
    if not inside:
        raise ValueError(f"must be between {EARLIEST_TIME} and {LATEST_TIME}")
    return value


# JSON carries a time as a string: the one field type the strict records read leniently.
Timestamp = Annotated[datetime | None, Field(strict=False), BeforeValidator(_time_as_text), AfterValidator(_time_in_range)]

ConversationKind = Literal["chat", "tracker", "code_host", "wiki", "monitor", "cron", "schedule", "a2a", "internal", "sandbox"]
ReviewOutcome = Literal["done", "failed", "self_iterate", "skipped"]
FailureSetBy = Literal["reviewer", "guard", "budget", "provider_chain"]
SenderKind = Literal["human", "agent", "bot"]

# Conversations a clock drives: they repeat one procedure on a timer and would grind out noise skills.
SCHEDULED_KINDS = ("cron", "schedule")
# Triggers that carry no human's message: an agent's ask, a schedule's fire, a sandbox completion.
INTERNAL_KINDS = ("a2a", "internal", "cron", "schedule", "sandbox")
SETTLED = ("done", "failed")


class Sender(BaseModel):
    """A resolved sender: a handle or an external id, on a platform."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    handle: Text = Field("", max_length=200)
    external_id: Text = Field("", max_length=200)
    platform: Text = Field("", max_length=60)
    display_name: Text = Field("", max_length=200)
    kind: SenderKind = "human"

    @model_validator(mode="after")
    def _identified(self):
        if not (self.handle or self.external_id):
            raise ValueError("a sender needs a handle or an external_id")
        return self

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.handle, self.external_id, self.platform)

    @property
    def name(self) -> str:
        return self.display_name or self.handle or self.external_id

    @property
    def who(self) -> str:
        """The name with its platform, as the prefetch's filter prompts name a trigger's sender."""
        return f"{self.name} ({self.platform})" if self.platform else self.name


class Interaction(BaseModel):
    """One inbound message: its sender and its salient body (the message, no scaffolding)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    sender: Sender
    body: Text = Field("", max_length=MAX_TEXT_CHARS)
    at: Timestamp = None

    def scrubbed(self) -> Interaction:
        """The message with every secret in its body replaced by its placeholder (``core.scrub``)."""
        body = scrub_secrets(self.body)
        return self if body == self.body else self.model_copy(update={"body": body})


def derive_ask(*, ask: str, interactions: Iterable[Interaction], label: str = "", subject_is_label: bool = True) -> str:
    """What the turn was asked: the ``ask`` the runtime states, else the interactions' salient bodies.

    Bodies are joined in order, each led by its sender only when more than one person spoke (a
    coalesced burst reads ``Alice: ...``), and led by the waking event's label where the subject is
    part of what was sent (``subject_is_label`` false: an issue's key and title); a chat message's
    subject is only the surface's name, so a chat turn's ask is what was said.
    """
    if ask.strip():
        return ask
    spoken = [i for i in interactions if i.body.strip()]
    if not spoken:
        return ""
    if len({i.sender.key for i in spoken}) <= 1:
        text = "\n".join(i.body.strip() for i in spoken)
    else:
        text = "\n".join(f"{i.sender.name}: {i.body.strip()}" for i in spoken)
    if not subject_is_label and label.strip():
        text = f"{label.strip()}\n{text}"
    return text


def distinct_senders(interactions: Iterable[Interaction], *, exclude_handle: str = "") -> list[Sender]:
    """Distinct senders in order of first appearance; a seat is never its own counterparty."""
    seen, out = set(), []
    for interaction in interactions:
        sender = interaction.sender
        if sender.key in seen or (exclude_handle and sender.handle == exclude_handle):
            continue
        seen.add(sender.key)
        out.append(sender)
    return out


# the record's fields a person or a model wrote in words (where a pasted secret lands)
FREE_TEXT = ("label", "ask", "plan_summary", "failure_reason", "work_item", "schedule")


class TurnRecord(BaseModel):
    """The ``turn_completed`` record, as the runtime posts it and as reflection reads it."""

    model_config = ConfigDict(extra="forbid", strict=True)

    run_id: Text = Field(min_length=1, max_length=200, description="The turn's run id (the prefetch's).")
    work_key: Text = Field("", max_length=200)
    seat: Text = Field(min_length=1, max_length=100, description="The seat's handle.")
    conversation_id: Text = Field("", max_length=300)
    conversation_kind: ConversationKind
    label: Text = Field("", max_length=MAX_LABEL_CHARS, description="The waking event's label (what kind of event woke the turn).")
    subject_is_label: bool = Field(
        True, description="The label is only the surface's name (a chat message's \"Slack message\"), not part of "
        "what was sent; false leads the ask with the label (an issue's key and title).")
    ask: Text = Field("", max_length=MAX_TEXT_CHARS, description="What the turn was asked. Omitted: the ask the run's prefetch derived, else "
                      "the interactions' bodies.")
    plan_summary: Text = Field("", max_length=MAX_TEXT_CHARS, description="What it did: the last review's account, or the final answer.")
    tool_sequence: list[ToolName] = Field(default_factory=list, max_length=MAX_TOOL_CALLS, description="The final round's tools, in order.")
    tools_called: list[ToolName] = Field(default_factory=list, max_length=MAX_TOOL_CALLS, description="Every tool call of the turn, in order.")
    tool_iterations: int | None = Field(
        None, ge=0, le=MAX_TOOL_CALLS, description="Iterations of the agentic loop that called tools (one tool-call "
        "assistant message each, however many calls it carried); unknown when omitted.")
    replied: bool = Field(False, description="The turn delivered a reply to its trigger (the model's final message "
                          "was sent), which counts as engagement even with no tool call.")
    review_outcome: ReviewOutcome
    failure_set_by: FailureSetBy | None = None
    failure_reason: Text = Field("", max_length=MAX_TEXT_CHARS)
    skills_offered: list[SkillId] | None = Field(
        None, max_length=MAX_SKILLS_OFFERED, description="Skill ids the prompt offered. Omitted: the ids the run's prefetch offered.")
    interactions: list[Interaction] = Field(default_factory=list, max_length=MAX_INTERACTIONS)
    self_persisted: bool = False
    worker_completed: bool = False
    work_item: Text = Field("", max_length=200)
    schedule: Text = Field("", max_length=200, description="A scheduled turn's schedule name.")
    started_at: Timestamp = None
    ended_at: Timestamp = None
    duration_ms: int | None = Field(None, ge=0, le=MAX_DURATION_MS)

    @field_validator("failure_set_by")
    @classmethod
    def _failure_only_on_failed(cls, value, info: ValidationInfo):
        if value is not None and info.data.get("review_outcome") != "failed":
            raise ValueError("failure_set_by is set only when review_outcome is failed")
        return value

    @field_validator("tool_iterations")
    @classmethod
    def _iterations_within_calls(cls, value, info: ValidationInfo):
        calls = len(info.data.get("tools_called") or info.data.get("tool_sequence") or [])
        if value is not None and value > calls:
            raise ValueError(f"tool_iterations ({value}) exceeds the {calls} tool call(s) the record lists: "
                             "an iteration is one assistant message that called at least one tool")
        return value

    @field_validator("ended_at")
    @classmethod
    def _ends_after_start(cls, value, info: ValidationInfo):
        started = info.data.get("started_at")
        if value is not None and started is not None and value < started:
            raise ValueError("ended_at is before started_at")
        return value

    def scrubbed(self) -> TurnRecord:
        """The record with every secret in its free text replaced by its placeholder (``core.scrub``): what
        intake stores and every worker and model reads. Ids, names and enums are kept as sent."""
        update: dict[str, object] = {name: scrub_secrets(getattr(self, name)) for name in FREE_TEXT}
        update["interactions"] = [i.scrubbed() for i in self.interactions]
        return self.model_copy(update=update)

    # --- derived, under the names the spec gives them -------------------------------------------
    @property
    def the_ask(self) -> str:
        return derive_ask(ask=self.ask, interactions=self.interactions, label=self.label,
                          subject_is_label=self.subject_is_label)

    @property
    def settled(self) -> bool:
        return self.review_outcome in SETTLED

    @property
    def scheduled(self) -> bool:
        return self.conversation_kind in SCHEDULED_KINDS

    @property
    def internal_trigger(self) -> bool:
        return self.conversation_kind in INTERNAL_KINDS

    @property
    def calls(self) -> list[str]:
        """Every tool call the turn made, in order, repeats kept (the engagement and iteration count)."""
        return list(self.tools_called) or list(self.tool_sequence)

    @property
    def offered(self) -> list[int]:
        return list(self.skills_offered or [])
