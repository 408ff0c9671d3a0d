"""PersistDecider: the deterministic post-turn decision, what (if anything) should persist?

Settled turns only (``done`` / ``failed``; ``self_iterate`` is a mid-state). Skipped when the turn
already self-persisted, so the two writers do not double-write one fact, unless the conversation's
skill-reflection signal starts the pass on its own. Shown the seat's recent notes and asked not to
repeat one. LONG and SHORT write through ``learning.memory.diary.write`` (the one place the 2,000-character
rule lives: a note past it is skipped and logged, never trimmed); DOC is a logged recommendation.
A note that says what a live note of the seat already says (``learning.memory.dedup``) is not stored again.
The worker's outcome names the provider whose answer it acted on (``answered_by``: an alias, or
``offline`` with ``fallback`` saying why no model's answer was used).
"""

from __future__ import annotations

import copy
import logging
from datetime import datetime
from typing import Any

from core import auxiliary, events
from crewlet.config.schema import Learning
from learning import limits
from learning.events import PersistDeciderCompleted
from learning.memory import dedup, diary
from learning.models import DiaryEntry
from learning.purposes import persist_decision
from learning.purposes.describe import turn_inputs
from learning.reflection.turn_context import TurnContext
from learning.reflection.worker import Answered, Prepared
from learning.reflection.workers import skill_reflector

log = logging.getLogger("learning.reflection.workers.persist_decider")

RECENT_NOTES_SHOWN = 50
KINDS = {"LONG": DiaryEntry.LONG, "SHORT": DiaryEntry.SHORT}


def build_inputs(ctx, *, reflect: bool) -> persist_decision.Inputs:
    reflection = None
    if reflect:
        reflection = {
            "skills": skill_reflector.catalogue_inputs(ctx.seat),
            "read": {},
            "memory_closed": bool(ctx.self_persisted),
        }
    return persist_decision.Inputs(
        **turn_inputs(ctx),
        recent_notes=diary.recent_texts(seat=ctx.seat, limit=RECENT_NOTES_SHOWN, now=ctx.now),
        skill_reflection=reflection,
    )


def _ask(ctx):
    def ask(inputs: persist_decision.Inputs) -> persist_decision.Decision:
        return ctx.consult(persist_decision.NAME, inputs)

    return ask


def _prepare_note(ctx, answer: persist_decision.Decision):
    """The note checked and embedded before the pass's transaction, or None (no note, or over a limit)."""
    classification = answer.classification
    if classification not in KINDS:
        return None
    try:
        return diary.prepare(
            seat=ctx.seat, content=answer.content, kind=KINDS[classification], ttl_days=answer.ttl_days,
            source="persist_decider", turn_id=ctx.run_id, now=ctx.now,
        )
    except limits.LimitExceeded:
        return None  # ``store`` checks again and reports the limit


def store(ctx, answer: persist_decision.Decision, *, entry=None, duplicate_of: int | None = None) -> dict:
    """Act on one decision and announce it with ``persist_decider_completed`` (``entry``: the note
    already prepared, so no embed runs here; ``duplicate_of``: the live note it repeats, so none is)."""
    classification, content = answer.classification, answer.content
    outcome: dict[str, Any] = {"classification": classification, "ttl_until": None, "entry_id": None,
                               "reason": answer.reason}
    if classification in KINDS and duplicate_of is not None:
        log.info("persist decider: %s's %s note repeats note %s; not stored", ctx.seat.handle, classification,
                 duplicate_of)
        outcome["skipped"] = "duplicate"
        events.publish(PersistDeciderCompleted(**outcome), seat=ctx.seat, turn_id=ctx.run_id)
        return {**outcome, "duplicate_of": duplicate_of}
    if classification in KINDS:
        try:
            if entry is None:
                entry = diary.prepare(
                    seat=ctx.seat,
                    content=content,
                    kind=KINDS[classification],
                    ttl_days=answer.ttl_days,
                    source="persist_decider",
                    turn_id=ctx.run_id,
                    now=ctx.now,
                )
            diary.store(entry)
            outcome.update(entry_id=entry.pk, ttl_until=entry.ttl_until)
        except limits.LimitExceeded as exc:  # nobody is there to ask for a tighter note
            log.warning("persist decider skipped a %s note for %s: %s", classification, ctx.seat.handle, exc)
            outcome.update(skipped=exc.limit_name, size=exc.size)
    elif classification == "DOC":
        log.info("persist decider recommends team documentation for %s: %s", ctx.seat.handle, content)
        outcome["recommendation"] = content
    events.publish(PersistDeciderCompleted(**outcome), seat=ctx.seat, turn_id=ctx.run_id)
    return outcome


class Decided(Answered):
    """The decision and what became of it (``store``): the note written, or why none was."""

    classification: str
    reason: str = ""
    entry_id: int | None = None
    ttl_until: datetime | None = None
    skipped: str | None = None  # "duplicate", or the limit a note went past
    size: int | None = None
    duplicate_of: int | None = None
    recommendation: str | None = None  # a DOC answer's text, logged for the team


class PersistDecider:
    """The PersistDecider: what of the turn goes into the diary."""

    name = "persist_decider"

    def wired(self, learning: Learning) -> bool:
        return learning.enabled

    def applies(self, ctx: TurnContext) -> str | None:
        if not ctx.settled:
            return "unsettled"
        if ctx.self_persisted and not skill_reflector.due(ctx):
            return "self_persisted"
        if not auxiliary.available(ctx.seat):
            return "no_auxiliary_model"
        return None

    def run(self, ctx: TurnContext) -> Prepared:
        """The decision (model call and the note's embed, no writes); returns the write that stores it."""
        reflect = skill_reflector.due(ctx)
        inputs = build_inputs(ctx, reflect=reflect)
        ask = _ask(ctx)
        answer = skill_reflector.converse(ctx, inputs, ask) if reflect else ask(inputs)
        if ctx.self_persisted:
            answer = answer.model_copy(
                update={"classification": "NOOP", "content": "", "ttl_days": None, "reason": "self_persisted"}
            )
        entry = _prepare_note(ctx, answer)
        duplicate = None
        if entry is not None:
            similarity = ctx.knobs.learning.personal_memory.duplicate_similarity
            duplicate = dedup.duplicate_of(entry, similarity=similarity, now=ctx.now)
        answered = (ctx.notes.get("answered_by") or {}).get(persist_decision.NAME) or {}

        def write() -> Decided:
            if reflect:
                skill_reflector.apply_pending(ctx)
            # a copy: a retried write inserts afresh
            return Decided(**store(ctx, answer, entry=copy.copy(entry), duplicate_of=duplicate), **answered)

        return write
