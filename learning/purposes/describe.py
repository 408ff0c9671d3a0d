"""How every post-turn prompt describes a turn (``TurnInputs``): woken by / asked / what it did.

Never "task" and "plan": a model reads those as the whole of what was asked and what was intended,
where the label only says what kind of event woke the turn.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict


class TurnInputs(BaseModel):
    """One turn as a post-turn purpose is shown it; each such purpose's inputs model extends it."""

    model_config = ConfigDict(extra="forbid")

    seat: str = ""
    woken_by: str = ""
    asked: str = ""
    interactions: list[dict[str, Any]] = []  # each {"sender", "sender_kind", "body"}, in the order received
    what_it_did: str = ""
    outcome: str = ""
    failure_set_by: str = ""
    failure_reason: str = ""
    tool_sequence: list[str] = []
    tool_calls: int = 0
    tools_called: list[str] = []
    today: str = ""  # an ISO date


def turn_inputs(ctx) -> dict[str, Any]:
    """The ``TurnInputs`` fields of one turn, for a purpose's inputs model to be built from."""
    return {
        "seat": ctx.seat.handle,
        "woken_by": ctx.label,
        "asked": ctx.ask,
        "interactions": [
            {"sender": i.sender.name, "sender_kind": i.sender.kind, "body": i.body} for i in ctx.interactions
        ],
        "what_it_did": ctx.what_it_did,
        "outcome": ctx.outcome,
        "failure_set_by": ctx.record.failure_set_by or "",
        "failure_reason": ctx.record.failure_reason,
        "tool_sequence": ctx.tool_sequence,
        "tool_calls": len(ctx.tools_called),
        "tools_called": ctx.tools_called,
        "today": ctx.now.date().isoformat(),
    }


def outcome_line(turn: TurnInputs) -> str:
    line = f"Outcome: {turn.outcome or 'unknown'}"
    if turn.outcome == "failed" and turn.failure_set_by:
        line += f" (set by {turn.failure_set_by}"
        line += f": {turn.failure_reason})" if turn.failure_reason else ")"
    return line


def tools_line(turn: TurnInputs) -> str:
    tools = turn.tool_sequence
    return f"Tools (final round, in order): {', '.join(tools) if tools else 'none'}"


def describe_turn(turn: TurnInputs, *, with_senders: bool = False) -> str:
    """Woken by, asked (or each interaction with its sender), what it did, outcome, tools."""
    lines = [f"Woken by: {turn.woken_by or '(no label)'}"]
    if with_senders and turn.interactions:
        lines.append("Messages it received:")
        lines.extend(f"- {i['sender']}: {i['body']}" for i in turn.interactions)
    elif turn.asked:
        lines.append(f"Asked: {turn.asked}")
    lines.append(f"What it did: {turn.what_it_did or '(no account)'}")
    lines.append(outcome_line(turn))
    lines.append(tools_line(turn))
    return "\n".join(lines)


def as_json(value) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)
