"""The conversation ledger: what this seat last said and did in this conversation.

A keyed read of the seat's latest stored turns (``Turn``, the ``turn_completed`` payloads) with the
trigger's conversation id: no embedding, no auxiliary call, so the thin-trigger gate has nothing to
save and does not apply. The newest account is shown whole; an older one past 600 bytes is named by
its size with the way to read it (query_episodes by conversation).
"""

from __future__ import annotations

import logging

from django.db import DatabaseError

from crewlet.models import Seat
from learning import limits
from learning.intake.turns import record_of
from learning.memory.condensation import nbytes
from learning.models import Turn
from learning.prefetch import bounds
from learning.prefetch.blocks import BlockResult, done
from learning.prefetch.turn_state import PrefetchContext

log = logging.getLogger("learning.prefetch")

NAME = "conversation_ledger"
HEADING = "## What you last said and did in this conversation"


# what a ledger entry reads of a turn
TURN_FIELDS = ("id", "run_id", "review_outcome", "payload", "received_at")


def latest_turns(*, seat: Seat, conversation_id: str, exclude_run_id: str = "") -> list[Turn]:
    """The seat's latest turns in the conversation, newest first, but the one named (this turn)."""
    turns = Turn.objects.filter(seat=seat, conversation_id=conversation_id)
    if exclude_run_id:
        turns = turns.exclude(run_id=exclude_run_id)
    return list(turns.only(*TURN_FIELDS).order_by("-received_at", "-id")[: bounds.LEDGER_TURNS])


def turn_entry(turn: Turn, *, newest: bool) -> str:
    record = record_of(turn)
    tools = ", ".join(dict.fromkeys(record.tool_sequence or record.tools_called)) or "none"
    lines = [f"- {turn.received_at.date().isoformat()} · {turn.review_outcome or 'outcome unknown'} · tools: {tools}"]
    asked = " ".join(record.the_ask.split())
    if asked:
        lines.append(f"  asked: {asked if newest or nbytes(asked) <= limits.EPISODE_ACCOUNT_BYTES else _sized(asked)}")
    did = " ".join(record.plan_summary.split())
    if did:
        lines.append(f"  what you did: {did if newest or nbytes(did) <= limits.EPISODE_ACCOUNT_BYTES else _sized(did)}")
    return "\n".join(lines)


def _sized(text: str) -> str:
    return f"[{nbytes(text)} bytes; query_episodes(conversation=...) reads it whole]"


def start(ctx: PrefetchContext):
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
    return done(BlockResult(NAME, text, selection_count=len(turns), shown={"turns": [t.run_id for t in turns]}))
