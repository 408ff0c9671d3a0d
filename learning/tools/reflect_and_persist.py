"""``reflect_and_persist``: write one declarative fact to your own diary, mid-turn.

Goes through ``Diary.write`` (the same store and the same 2,000-character refusal as the
PersistDecider) and marks the turn as self-persisted: an Event ``reflect_and_persist_called``
keyed by the run id, written in the same transaction as the note, which the reflection reads
(``learning.reflection.turn_context.self_persisted``) so the post-turn decider does not write the
same fact twice.
"""

from __future__ import annotations

from typing import Literal

from django.db import transaction
from pydantic import Field

from core import events
from crewlet import config
from crewlet.errors import BadInput
from learning import limits
from learning.events import ReflectAndPersistCalled
from learning.memory import dedup, diary
from learning.models import DiaryEntry
from learning.tools.base import Arguments, Text, Tool, ToolCall, ToolResult, refuse_field

KINDS = {"long": DiaryEntry.LONG, "short": DiaryEntry.SHORT, DiaryEntry.LONG: DiaryEntry.LONG,
         DiaryEntry.SHORT: DiaryEntry.SHORT}
MAX_TTL_DAYS = 3650


class ReflectAndPersistArgs(Arguments):
    # The cap is documented here and enforced by limits.check_note, whose refusal names the spec's limit.
    content: Text = Field(..., min_length=1, json_schema_extra={"maxLength": limits.MAX_CONTENT_CHARS},
                          description="One declarative fact.")
    kind: Literal["long", "short", "diary_long", "diary_short"] = Field(
        ..., description="long: a durable fact or preference; short: situational state that expires."
    )
    ttl_days: int | None = Field(None, ge=1, le=MAX_TTL_DAYS, description="Days a short note stays true.")


def handle(call: ToolCall[ReflectAndPersistArgs]) -> ToolResult:
    args = call.args
    if not args.content.strip():
        raise BadInput("arguments.content: a note needs some text", field="arguments.content")
    kind = KINDS[args.kind]
    try:
        # Embed first, outside the write transaction: no transaction stays open while the model runs.
        entry = diary.prepare(seat=call.seat, content=args.content, kind=kind, ttl_days=args.ttl_days,
                              source="reflect_and_persist", turn_id=call.run_id)
        similarity = config.knobs_for_seat(call.seat).learning.personal_memory.duplicate_similarity
        kept = dedup.duplicate_of(entry, similarity=similarity)
        if kept is not None:  # the diary already says it: one note, not two
            return ToolResult(ok=True, text=f"Your diary already says this (note {kept}); nothing new was saved.",
                              data={"entry_id": kept, "kind": kind, "duplicate": True})
        with transaction.atomic():
            diary.store(entry)
            events.publish(ReflectAndPersistCalled(entry_id=entry.id, kind=kind), seat=call.seat, turn_id=call.run_id)
    except limits.LimitExceeded as exc:
        raise refuse_field(exc, "arguments.content") from None
    except BadInput as exc:
        raise refuse_field(exc, "arguments.ttl_days" if "ttl_days" in exc.message else "arguments.kind") from None
    until = f", until {entry.ttl_until.date().isoformat()}" if entry.ttl_until else ""
    vector = "" if entry.embedding_model else " It was stored without a vector for now; recency still finds it."
    return ToolResult(ok=True, text=f"Saved to your diary as note {entry.id} ({kind}{until}).{vector}",
                      data={"entry_id": entry.id, "kind": kind})


TOOL = Tool(
    name="reflect_and_persist",
    description="Save one durable fact you just learned (a preference, a decision, a situation with an end date) "
    "to your own memory, written as a fact rather than an instruction to yourself.",
    arguments=ReflectAndPersistArgs,
    handler=handle,
    needs_run_id=True,
)
