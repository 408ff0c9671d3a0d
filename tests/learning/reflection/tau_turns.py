"""tau-bench airline runs as the turn records a runtime would post for them (one finished turn a run)."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from learning.intake import turns
from learning.intake.record import TurnRecord
from learning.models import Turn
from learning.reflection import reflect_turn
from tests import dev_data


def customer(run: dict) -> dict:
    user = run["info"]["task"]["user_id"]
    name = " ".join(p.capitalize() for p in user.split("_") if p.isalpha())
    return {"handle": user, "external_id": "", "platform": "web", "display_name": name, "kind": "human"}


def record(run: dict, seat_handle: str, *, n: int, run_prefix: str = "tau") -> TurnRecord:
    rounds = dev_data.tau_tool_rounds(run)
    called = [t for r in rounds for t in r]
    ended = timezone.now() - timedelta(hours=200 - n)
    sender = customer(run)
    return TurnRecord.model_validate({
        "run_id": f"{run_prefix}-{run['task_id']}-{run['trial']}", "seat": seat_handle, "conversation_kind": "chat",
        "conversation_id": f"web:{sender['handle']}:{run['task_id']}-{run['trial']}", "label": "Web chat message",
        "interactions": [{"sender": sender, "body": body} for body in dev_data.tau_user_messages(run)],
        "plan_summary": dev_data.tau_final_answer(run), "tools_called": called, "tool_sequence": called,
        "tool_iterations": len(rounds), "replied": True, "review_outcome": "done",
        "started_at": (ended - timedelta(minutes=10)).isoformat(), "ended_at": ended.isoformat(),
    })


def post_and_reflect(runs: list[dict], seat_of, *, run_prefix: str = "tau") -> list[Turn]:
    """Each run stored through the production intake and reflected, oldest first; ``seat_of(run)`` picks the seat."""
    stored = []
    for n, run in enumerate(runs):
        seat = seat_of(run)
        turn, _ = turns.store_turn(seat=seat, record=record(run, seat.handle, n=n, run_prefix=run_prefix))
        reflect_turn(turn.pk)
        stored.append(turn)
    return stored
