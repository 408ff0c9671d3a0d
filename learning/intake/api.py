"""``POST /turns``: the ``turn_completed`` record (the seat's own token). 202 with the turn id when new, 200 on a repeat.

Run ids are unique per seat: a repeat is the same seat's run id with the same payload; another
payload under it is a 409 naming the fields that differ (``differing_fields``).

The record is ``learning.intake.record.TurnRecord``, the one schema reflection reads: unknown fields are
refused rather than silently dropped, and every bad field is named in the 422 (crewlet.api's
validation handler). Nothing partial is stored.
"""

from __future__ import annotations

from typing import Literal

from ninja import Router, Schema, Status

from crewlet.auth import acting_seat, seat_only_auth
from crewlet.errors import error_responses
from learning.intake import turns
from learning.intake.record import TurnRecord

router = Router(tags=["turns"])


class TurnAccepted(Schema):
    turn_id: int
    run_id: str
    status: Literal["accepted", "duplicate"]


@router.post("/turns", auth=seat_only_auth, response={200: TurnAccepted, 202: TurnAccepted,
                                                   **error_responses(400, 401, 403, 409, 413, 422)})
def post_turn(request, payload: TurnRecord):
    """Store the turn's record and enqueue its reflection; ``skills_offered`` and ``ask`` default to what
    the run's prefetch offered and derived."""
    seat = acting_seat(request, payload.seat)
    turn, created = turns.store_turn(seat=seat, record=payload)
    answer = TurnAccepted(turn_id=turn.pk, run_id=turn.run_id, status="accepted" if created else "duplicate")
    return Status(202 if created else 200, answer)
