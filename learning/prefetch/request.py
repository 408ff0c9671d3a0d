"""What a turn start hands the prefetch: its run id and its trigger, read once and never re-derived."""

from __future__ import annotations

from dataclasses import dataclass, field

THREAD_READ = "read"
THREAD_UNREADABLE = "unreadable"
THREAD_TRUNCATED = "truncated"  # too long for the backend to read to its end: the newest are missing
THREAD_STATUSES = (THREAD_READ, THREAD_UNREADABLE, THREAD_TRUNCATED)


@dataclass(frozen=True)
class Interaction:
    """One inbound message of the trigger: its resolved sender and its salient body (no scaffolding)."""

    sender_handle: str = ""
    sender_external_id: str = ""
    platform: str = ""
    sender_name: str = ""
    body: str = ""

    @property
    def sender_key(self) -> tuple[str, str, str]:
        return (self.sender_handle, self.sender_external_id, self.platform)

    @property
    def who(self) -> str:
        name = self.sender_name or self.sender_handle or self.sender_external_id
        return f"{name} ({self.platform})" if self.platform and name else name


@dataclass(frozen=True)
class ThreadMessage:
    sender_name: str = ""
    sender_handle: str = ""
    is_self: bool = False
    text: str = ""
    ts: str = ""


@dataclass(frozen=True)
class Thread:
    status: str = THREAD_READ
    messages: tuple[ThreadMessage, ...] = ()


@dataclass(frozen=True)
class PrefetchRequest:
    run_id: str
    ask: str = ""
    requires_recon: bool = False
    interactions: tuple[Interaction, ...] = ()
    conversation_id: str = ""
    conversation_kind: str = ""
    thread: Thread | None = None  # None: not a chat thread reply, so no thread block
    tools: tuple[str, ...] | None = None  # None: the role's registered tools
    extra: dict = field(default_factory=dict)

    def senders(self, *, exclude_handle: str = "") -> list[Interaction]:
        """Distinct senders in order of first appearance; a seat is never its own counterparty."""
        seen, out = set(), []
        for interaction in self.interactions:
            key = interaction.sender_key
            if not any(key) or key in seen or (exclude_handle and interaction.sender_handle == exclude_handle):
                continue
            seen.add(key)
            out.append(interaction)
        return out


def ask_from_interactions(interactions) -> str:
    """What the trigger asked where the turn start names no ask: the salient bodies, in order, each led
    by its sender when more than one person spoke (a coalesced burst reads ``Alice: …``)."""
    spoken = [i for i in interactions if i.body.strip()]
    senders = {i.sender_key for i in spoken}
    if len(senders) <= 1:
        return "\n".join(i.body.strip() for i in spoken)
    return "\n".join(f"{i.sender_name or i.sender_handle or i.sender_external_id}: {i.body.strip()}" for i in spoken)
