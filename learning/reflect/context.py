"""What one reflection pass knows about its turn: the stored ``turn_completed`` record, read whole.

Every gate reads the payload itself, because the record is all a pass has: a field left off it is a
fact no worker can consult.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from crewlet import config

SETTLED = ("done", "failed")
# Conversations a clock drives: they repeat one procedure on a timer and would grind out noise skills.
SCHEDULED_KINDS = ("cron", "schedule")
# Triggers that carry no human's message: an agent's ask, a schedule's fire, a sandbox completion.
INTERNAL_KINDS = ("a2a", "internal", "cron", "schedule", "sandbox")


@dataclass(frozen=True)
class Sender:
    handle: str
    external_id: str
    platform: str
    display_name: str
    kind: str  # human | agent | bot

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.handle, self.external_id, self.platform)

    @property
    def name(self) -> str:
        return self.display_name or self.handle or self.external_id or "someone"


@dataclass(frozen=True)
class Interaction:
    sender: Sender
    body: str
    at: str = ""


@dataclass
class TurnContext:
    """One turn as the pass sees it, plus what earlier workers of the same pass left for later ones."""

    turn: Any  # learning.models.Turn
    seat: Any  # crewlet.models.Seat
    payload: dict
    now: datetime = field(default_factory=timezone.now)
    notes: dict = field(default_factory=dict)

    @classmethod
    def of(cls, turn, *, now: datetime | None = None) -> TurnContext:
        payload = dict(turn.payload or {})
        if not payload.get("self_persisted"):
            # the record's flag, or the builtin having been called under this run id (either writer suffices)
            from learning.tools.reflect_and_persist import self_persisted

            payload["self_persisted"] = self_persisted(turn.run_id)
        return cls(turn=turn, seat=turn.seat, payload=payload, now=now or timezone.now())

    # --- the record's fields, under the names the spec gives them ---------------------------
    def get(self, name: str, default=None):
        value = self.payload.get(name)
        return default if value is None else value

    @property
    def run_id(self) -> str:
        return self.turn.run_id

    @property
    def outcome(self) -> str:
        return self.get("review_outcome", "")

    @property
    def settled(self) -> bool:
        return self.outcome in SETTLED

    @property
    def conversation_id(self) -> str:
        return self.get("conversation_id", "")

    @property
    def conversation_kind(self) -> str:
        return self.get("conversation_kind", "")

    @property
    def scheduled(self) -> bool:
        return self.conversation_kind in SCHEDULED_KINDS

    @property
    def internal_trigger(self) -> bool:
        return self.conversation_kind in INTERNAL_KINDS

    @property
    def label(self) -> str:
        return self.get("label", "")

    @property
    def tool_sequence(self) -> list[str]:
        """The final round's ordered tool run."""
        return list(self.get("tool_sequence", []))

    @property
    def tools_called(self) -> list[str]:
        """Every tool call the turn made, in order, repeats kept (the engagement and iteration count)."""
        return list(self.get("tools_called", [])) or self.tool_sequence

    @property
    def skills_offered(self) -> list[int]:
        return [int(i) for i in self.get("skills_offered", [])]

    @property
    def interactions(self) -> list[Interaction]:
        out = []
        for raw in self.get("interactions", []):
            s = raw.get("sender") or {}
            sender = Sender(
                handle=s.get("handle") or "",
                external_id=s.get("external_id") or "",
                platform=s.get("platform") or "",
                display_name=s.get("display_name") or "",
                kind=s.get("kind") or "human",
            )
            out.append(Interaction(sender=sender, body=raw.get("body") or "", at=raw.get("at") or ""))
        return out

    @property
    def ask(self) -> str:
        """What the turn was asked: the interactions' salient bodies, or the ``ask`` the record carries."""
        interactions = self.interactions
        if not interactions:
            return self.get("ask", "")
        if len({i.sender.key for i in interactions}) == 1:
            text = "\n".join(i.body for i in interactions)
        else:
            text = "\n".join(f"{i.sender.name}: {i.body}" for i in interactions)
        if not self.get("subject_is_label", True) and self.label:
            text = f"{self.label}\n{text}"
        return text

    @property
    def what_it_did(self) -> str:
        return self.get("plan_summary", "")

    def time(self, name: str) -> datetime | None:
        value = self.payload.get(name)
        return parse_datetime(value) if isinstance(value, str) else value

    # --- config in force for this seat ------------------------------------------------------
    @property
    def knobs(self):
        return config.knobs_for_seat(self.seat)
