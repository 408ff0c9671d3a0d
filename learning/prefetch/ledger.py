"""The conversation ledger: what this seat last said and did in this conversation.

A keyed read of the seat's latest stored turns (``Turn``, the ``turn_completed`` payloads) with the
trigger's conversation id: no embedding, no auxiliary call, so the thin-trigger gate has nothing to
save and does not apply. The newest account is shown whole; an older one past 600 bytes is named by
its size with the way to read it (query_episodes by conversation).
"""

from __future__ import annotations

import logging

from django.db import DatabaseError

from learning import limits
from learning.models import Turn
from learning.prefetch import bounds
from learning.prefetch.blocks import BlockResult, done
from learning.prefetch.context import TurnContext
from learning.rewrites import nbytes

log = logging.getLogger("learning.prefetch")

NAME = "conversation_ledger"
HEADING = "## What you last said and did in this conversation"


def _field(payload: dict, *names) -> str:
    for name in names:
        value = payload.get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _tools(payload: dict) -> list[str]:
    for name in ("tool_sequence", "tools_called", "tool_names"):
        value = payload.get(name)
        if isinstance(value, list):
            return [str(v) for v in value]
    return []


def latest_turns(*, seat, conversation_id: str, exclude_run_id: str = "", limit: int = bounds.LEDGER_TURNS) -> list[Turn]:
    qs = Turn.objects.filter(seat=seat, conversation_id=conversation_id)
    if exclude_run_id:
        qs = qs.exclude(run_id=exclude_run_id)
    return list(qs.order_by("-received_at", "-id")[:limit])


def turn_entry(turn: Turn, *, newest: bool) -> str:
    payload = turn.payload if isinstance(turn.payload, dict) else {}
    tools = ", ".join(dict.fromkeys(_tools(payload))) or "none"
    lines = [f"- {turn.received_at.date().isoformat()} · {turn.review_outcome or 'outcome unknown'} · tools: {tools}"]
    asked = " ".join((_field(payload, "ask") or _interaction_bodies(payload)).split())
    if asked:
        lines.append(f"  asked: {asked if newest or nbytes(asked) <= limits.EPISODE_ACCOUNT_BYTES else _sized(asked)}")
    did = " ".join(_field(payload, "plan_summary", "final_answer").split())
    if did:
        lines.append(f"  what you did: {did if newest or nbytes(did) <= limits.EPISODE_ACCOUNT_BYTES else _sized(did)}")
    return "\n".join(lines)


def _interaction_bodies(payload: dict) -> str:
    """What the turn was asked where its interactions say it: each body with its sender."""
    parts = []
    for item in payload.get("interactions") or []:
        if not isinstance(item, dict) or not str(item.get("body", "")).strip():
            continue
        sender = item.get("sender") if isinstance(item.get("sender"), dict) else {}
        who = sender.get("display_name") or sender.get("handle") or sender.get("external_id") or ""
        parts.append(f"{who}: {item['body']}" if who else str(item["body"]))
    return " / ".join(parts)


def _sized(text: str) -> str:
    return f"[{nbytes(text)} bytes; query_episodes(conversation=...) reads it whole]"


def start(ctx: TurnContext):
    conversation_id = ctx.request.conversation_id
    if not conversation_id:
        return done(BlockResult(NAME, selection_count=0))
    try:
        turns = latest_turns(seat=ctx.seat, conversation_id=conversation_id, exclude_run_id=ctx.turn_id)
    except DatabaseError:
        log.warning("conversation ledger unreadable for %s", ctx.seat.handle, exc_info=True)
        return done(BlockResult(NAME, selection_count=0))
    if not turns:
        return done(BlockResult(NAME, selection_count=0))
    entries = [turn_entry(t, newest=(i == 0)) for i, t in enumerate(turns)]
    text = f"{HEADING}\nNewest first:\n" + "\n".join(entries)
    return done(BlockResult(NAME, text, selection_count=len(turns)))
