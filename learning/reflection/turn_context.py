"""What one reflection pass knows about its turn: the stored ``turn_completed`` record, typed.

Every gate reads the record (``learning.intake.record.TurnRecord``, the schema ``POST /turns`` takes),
because the record is all a pass has: a field left off it is a fact no worker can consult.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.utils import timezone
from pydantic import BaseModel

from core import events
from crewlet import config
from learning.events import ReflectAndPersistCalled
from learning.intake.record import Interaction, TurnRecord

if TYPE_CHECKING:
    from crewlet.models import Seat


def self_persisted(run_id: str, *, seat: Seat) -> bool:
    """Whether the seat's turn with this run id called ``reflect_and_persist`` (its ``reflect_and_persist_called``
    event, which the builtin writes with the note)."""
    return bool(run_id) and events.rows(ReflectAndPersistCalled, seat=seat, turn_id=run_id).exists()


@dataclass
class TurnContext:
    """One turn as the pass sees it, plus what earlier workers of the same pass left for later ones."""

    turn: Any  # learning.models.Turn
    seat: Any  # crewlet.models.Seat
    record: TurnRecord
    now: datetime = field(default_factory=timezone.now)
    notes: dict = field(default_factory=dict)
    spend: list = field(default_factory=list)  # the pass's auxiliary calls, charged once when it commits

    @classmethod
    def of(cls, turn, *, now: datetime | None = None) -> TurnContext:
        from learning.intake.turns import record_of

        return cls(turn=turn, seat=turn.seat, record=record_of(turn), now=now or timezone.now())

    @property
    def self_persisted(self) -> bool:
        """The record's flag, or the builtin having been called under this run id (either writer suffices)."""
        if self.record.self_persisted:
            return True
        if "self_persisted" not in self.notes:
            self.notes["self_persisted"] = self_persisted(self.run_id, seat=self.seat)
        return self.notes["self_persisted"]

    # --- the record's fields, under the names the spec gives them ---------------------------
    @property
    def run_id(self) -> str:
        return self.turn.run_id

    @property
    def outcome(self) -> str:
        return self.record.review_outcome

    @property
    def settled(self) -> bool:
        return self.record.settled

    @property
    def conversation_id(self) -> str:
        return self.record.conversation_id

    @property
    def conversation_kind(self) -> str:
        return self.record.conversation_kind

    @property
    def scheduled(self) -> bool:
        return self.record.scheduled

    @property
    def internal_trigger(self) -> bool:
        return self.record.internal_trigger

    @property
    def label(self) -> str:
        return self.record.label

    @property
    def tool_sequence(self) -> list[str]:
        """The final round's ordered tool run."""
        return list(self.record.tool_sequence)

    @property
    def tools_called(self) -> list[str]:
        """Every tool call the turn made, in order, repeats kept (the engagement and iteration count)."""
        return self.record.calls

    @property
    def skills_offered(self) -> list[int]:
        return self.record.offered

    @property
    def interactions(self) -> list[Interaction]:
        return list(self.record.interactions)

    @property
    def ask(self) -> str:
        """What the turn was asked (``derive_ask``: the same text the run's prefetch embedded)."""
        return self.record.the_ask

    @property
    def what_it_did(self) -> str:
        return self.record.plan_summary

    # --- the pass's model calls ---------------------------------------------------------------
    def consult(self, purpose: str, inputs: BaseModel | dict):
        """One reflection-stage auxiliary answer; its spend (a failed call's too) is held for the
        pass's one charge (``dispatcher._commit``), never recorded here."""
        from core import auxiliary

        try:
            answer = auxiliary.call(seat=self.seat, stage="reflection", purpose=purpose, turn_id=self.run_id,
                              inputs=inputs, defer_record=True)
        except Exception as exc:
            if getattr(exc, "attempts", None):
                self.spend.append(exc)
            raise
        self.spend.append(answer)
        # who answered, for the worker's outcome: the alias, or offline and why no model's answer was used
        said = {"answered_by": answer.provider, **({"fallback": answer.fallback} if answer.fallback else {})}
        self.notes.setdefault("answered_by", {})[purpose] = said
        return answer.value

    # --- config in force for this seat ------------------------------------------------------
    @property
    def knobs(self):
        return config.knobs_for_seat(self.seat)
