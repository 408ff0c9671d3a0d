"""What a turn start hands the prefetch: its run id and its trigger, read once and never re-derived."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from learning.intake.record import Interaction, Sender, Text, derive_ask, distinct_senders
from learning.limits import MAX_TEXT_CHARS, MAX_THREAD_MESSAGES

ThreadStatus = Literal["read", "unreadable", "truncated"]
THREAD_READ: ThreadStatus = "read"
THREAD_UNREADABLE: ThreadStatus = "unreadable"
THREAD_TRUNCATED: ThreadStatus = "truncated"  # too long for the backend to read to its end: the newest are missing
THREAD_STATUSES = (THREAD_READ, THREAD_UNREADABLE, THREAD_TRUNCATED)


class ThreadMessage(BaseModel):
    """One message of the chat thread the turn was woken in, as read at turn start."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    sender_name: Text = Field("", max_length=200)
    sender_handle: Text = Field("", max_length=200)
    is_self: bool = False
    text: Text = Field("", max_length=MAX_TEXT_CHARS)
    ts: Text = Field("", max_length=100)


class Thread(BaseModel):
    """The chat thread read at turn start; only for a thread reply (a top-level message has none)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    status: ThreadStatus = THREAD_READ
    messages: tuple[ThreadMessage, ...] = Field((), max_length=MAX_THREAD_MESSAGES, strict=False)  # a JSON list


@dataclass(frozen=True)
class PrefetchRequest:
    run_id: str
    ask: str = ""  # derived once, by ``derive_ask``: the ask reflection will store for this run
    requires_recon: bool = False
    interactions: tuple[Interaction, ...] = ()
    conversation_id: str = ""
    conversation_kind: str = ""
    thread: Thread | None = None  # None: not a chat thread reply, so no thread block
    tools: tuple[str, ...] | None = None  # None: the role's registered tools
    extra: dict = field(default_factory=dict)

    def senders(self, *, exclude_handle: str = "") -> list[Sender]:
        """Distinct senders in order of first appearance; a seat is never its own counterparty."""
        return distinct_senders(self.interactions, exclude_handle=exclude_handle)

    @classmethod
    def from_trigger(cls, *, run_id: str, ask: str = "", label: str = "", subject_is_label: bool = True,
                     interactions=(), **rest) -> PrefetchRequest:
        """The request for a trigger as the runtime describes it; its ask derived by ``derive_ask``."""
        interactions = tuple(interactions)
        derived = derive_ask(ask=ask, interactions=interactions, label=label, subject_is_label=subject_is_label)
        return cls(run_id=run_id.strip(), ask=derived, interactions=interactions, **rest)
