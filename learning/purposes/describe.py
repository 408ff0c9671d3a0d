"""How every post-turn prompt describes a turn: woken by / asked / what it did.

Never "task" and "plan": a model reads those as the whole of what was asked and what was intended,
where the label only says what kind of event woke the turn.
"""

from __future__ import annotations

import json


def turn_inputs(ctx) -> dict:
    """The structured inputs a purpose renders (and the offline heuristic reads) for one turn."""
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


def outcome_line(inputs: dict) -> str:
    line = f"Outcome: {inputs.get('outcome') or 'unknown'}"
    if inputs.get("outcome") == "failed" and inputs.get("failure_set_by"):
        line += f" (set by {inputs['failure_set_by']}"
        line += f": {inputs['failure_reason']})" if inputs.get("failure_reason") else ")"
    return line


def tools_line(inputs: dict) -> str:
    tools = inputs.get("tool_sequence") or []
    return f"Tools (final round, in order): {', '.join(tools) if tools else 'none'}"


def describe_turn(inputs: dict, *, with_senders: bool = False) -> str:
    """Woken by, asked (or each interaction with its sender), what it did, outcome, tools."""
    lines = [f"Woken by: {inputs.get('woken_by') or '(no label)'}"]
    interactions = inputs.get("interactions") or []
    if with_senders and interactions:
        lines.append("Messages it received:")
        lines.extend(f"- {i['sender']}: {i['body']}" for i in interactions)
    elif inputs.get("asked"):
        lines.append(f"Asked: {inputs['asked']}")
    lines.append(f"What it did: {inputs.get('what_it_did') or '(no account)'}")
    lines.append(outcome_line(inputs))
    lines.append(tools_line(inputs))
    return "\n".join(lines)


def as_json(value) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)
