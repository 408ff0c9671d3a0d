"""Skill reflection riding the persistence pass (spec/skill-reflection.md).

The conversation accumulates a reflection signal when a turn's tool-call iterations (the record's
``tool_iterations``: one assistant message with tool calls each) reach ``min_tool_iterations``, or
a worker attached to it completes successfully. When the signal is set
and the per-conversation cooldown allows, the next persistence pass runs with skill reflection on:
its prompt gains the reflection section and its answer may read, patch, add reference files to,
create or archive the seat's skills, under agent-origin rails applied here mechanically: only
the seat's own skills, never a pinned one, read before write, delete means archive, and every
write versioned through ``learning.memory.skills``. Cron and scheduled conversations never reflect.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from core import events
from crewlet.errors import Conflict
from crewlet.models import Seat
from learning import limits, skill_body
from learning.events import SkillReflectionApplied, WorkerOutcome, WorkerRan, WorkerSkipped
from learning.memory import skill_actions, skills
from learning.models import ConversationState, SynthesizedSkill
from learning.purposes import persist_decision
from learning.reflection.worker import Result

log = logging.getLogger("learning.reflection.workers.skill_reflector")

NAME = "skill_reflection"
MAX_ROUNDS = 3  # a read asks again with the body; a pass never loops past this
WRITE_ACTIONS = ("patch", "add_reference", "create", "archive")


class Reflected(Result):
    """The reflecting pass's rounds, the skills it read, and each action applied or refused (and why)."""

    rounds: int
    read: list[str]
    actions: list[dict[str, Any]]


def _knobs(ctx):
    return ctx.knobs.skills.reflection


def earned(ctx) -> list[str]:
    """The reasons this turn sets its conversation's signal (empty if none); no I/O. Kept on the
    context so the turn's own persistence pass sees its signal before the pass writes it."""
    knobs = _knobs(ctx)
    reasons = []
    if knobs.enabled and not ctx.scheduled and ctx.conversation_id:
        # the spec counts the loop's iterations (one tool-call message each), not the calls they carried; a
        # runtime that does not report them is counted by its calls, which is never fewer
        iterations = ctx.record.tool_iterations
        if (len(ctx.tools_called) if iterations is None else iterations) >= knobs.min_tool_iterations:
            reasons.append("tool_iterations")
        if ctx.record.worker_completed:
            reasons.append("worker_completed")
    if reasons:
        ctx.notes["signal_reasons"] = reasons
    return reasons


def accumulate(ctx) -> list[str]:
    """Set the conversation's signal when this turn earns it; return the reasons (empty if none)."""
    reasons = earned(ctx)
    if not reasons:
        return []
    fields = {"reflection_signal": True, "signal_reason": ",".join(reasons)}
    conversation = ConversationState.objects.filter(seat=ctx.seat, conversation_id=ctx.conversation_id)
    if not conversation.update(**fields):  # the conversation's first signal: its row is made first
        ConversationState.objects.get_or_create(seat=ctx.seat, conversation_id=ctx.conversation_id)
        conversation.update(**fields)
    return reasons


def applies(ctx) -> str | None:
    """Whether this turn's persistence pass reflects on skills; the gate's name when it does not."""
    knobs = _knobs(ctx)
    if not knobs.enabled:
        return "reflection_disabled"
    if ctx.scheduled:
        return "scheduled_conversation"
    if not ctx.conversation_id:
        return "no_conversation"
    state = ConversationState.objects.filter(seat=ctx.seat, conversation_id=ctx.conversation_id).order_by("pk").values_list(
        "reflection_signal", "last_skill_reflection_at").first()
    signal, last = state or (False, None)
    if not ctx.notes.get("signal_reasons") and not signal:
        return "no_signal"
    if last is not None and ctx.now - last < timedelta(seconds=knobs.cooldown_secs):
        return "cooldown"
    return None


def due(ctx) -> bool:
    if "skill_reflection_gate" not in ctx.notes:
        ctx.notes["skill_reflection_gate"] = applies(ctx)
    return ctx.notes["skill_reflection_gate"] is None


def report(ctx) -> WorkerOutcome:
    gate = ctx.notes.get("skill_reflection_gate")
    if gate:
        return WorkerSkipped(gate=gate)
    return ctx.notes.get(NAME) or WorkerSkipped(gate="no_persistence_pass")


def catalogue_inputs(seat: Seat) -> list[dict]:
    return [
        {"name": s.name, "description": s.description, "pinned": s.pinned, "tool_sequence": s.tool_sequence}
        for s in skills.catalogue(seat).order_by("name")
    ]


def converse(ctx, inputs: persist_decision.Inputs, ask) -> persist_decision.Decision:
    """The reflecting persistence pass's conversation: ``ask(inputs) -> parsed answer``, reads
    answered in rounds (each read's body is added to ``inputs.skill_reflection`` for the next).
    No writes: the answer's write actions wait for ``apply_pending``."""
    reflection = inputs.skill_reflection
    if reflection is None:
        raise ValueError("a reflecting persistence pass is asked with its skill_reflection section")
    refused_reads: list[dict] = []
    rounds = 0
    answer = persist_decision.Decision()
    for rounds in range(1, MAX_ROUNDS + 1):
        answer = ask(inputs)
        reads = [a.get("name", "") for a in answer.skill_actions if a.get("action") == "read"]
        fresh = [name for name in reads if name not in reflection["read"]]
        if not fresh or rounds == MAX_ROUNDS:
            break
        for name in fresh:
            skill = _own(ctx.seat, name)
            if skill is None:
                refused_reads.append({"action": "read", "name": name, "status": "refused", "why": "not_own_skill"})
            else:
                reflection["read"][name] = skill.body
        if all(name not in reflection["read"] for name in fresh):
            break
    writes = [a for a in answer.skill_actions if a.get("action") != "read"]
    ctx.notes["skill_reflection_pending"] = (rounds, reflection["read"], refused_reads, writes)
    return answer


def apply_pending(ctx) -> None:
    """The conversation's write actions under the rails, then the signal consumed (the write half)."""
    rounds, read, refused_reads, writes = ctx.notes["skill_reflection_pending"]  # kept: a retried write half reapplies
    applied = refused_reads + [apply_action(ctx, a, read=read) for a in writes]
    _consume(ctx)
    ctx.notes[NAME] = WorkerRan(result=Reflected(rounds=rounds, read=sorted(read), actions=applied).recorded())


def _consume(ctx) -> None:
    ConversationState.objects.filter(seat=ctx.seat, conversation_id=ctx.conversation_id).update(
        reflection_signal=False, signal_reason="", last_skill_reflection_at=ctx.now
    )


def _own(seat: Seat, name: str) -> SynthesizedSkill | None:
    return SynthesizedSkill.objects.filter(seat=seat, name=name).exclude(state=SynthesizedSkill.ARCHIVED).first()


def _refused(action: dict, why: str) -> dict:
    log.info("skill reflection refused %s on %r: %s", action.get("action"), action.get("name"), why)
    return {"action": action.get("action"), "name": action.get("name"), "status": "refused", "why": why}


def apply_action(ctx, action: dict, *, read: dict) -> dict:
    """One write under the agent-origin rails; refused writes are reported, never half-applied."""
    kind = "archive" if action.get("action") == "delete" else action.get("action")
    action = {**action, "action": kind}
    if kind not in WRITE_ACTIONS:
        return _refused(action, "unknown_action")
    if kind == "create":
        return _create(ctx, action)
    skill = _own(ctx.seat, action.get("name", ""))
    if skill is None:
        return _refused(action, "not_own_skill")
    if skill.pinned:
        return _refused(action, "pinned")
    if skill.name not in read:
        return _refused(action, "not_read")
    try:
        return _write(ctx, skill, action)
    except limits.LimitExceeded as exc:
        return _refused(action, exc.limit_name)


def _write(ctx, skill: SynthesizedSkill, action: dict) -> dict:
    actor, reason = f"agent:{ctx.seat.handle}", action.get("reason") or f"skill reflection ({action['action']})"
    if action["action"] == "patch":
        old, new = action.get("old") or "", action.get("new") or ""
        if not old or skill.body.count(old) != 1:
            return _refused(action, "patch_did_not_apply")
        body = skill.body.replace(old, new, 1)
    elif action["action"] == "add_reference":
        path, content = (action.get("file") or "").strip(), (action.get("content") or "").strip()
        if not path.startswith("references/") or ".." in path or not content:
            return _refused(action, "bad_reference")
        if skill_body.has_reference(skill.body, path):
            return _refused(action, "reference_exists")
        body = skill_body.add_reference(skill.body, path=path, content=content)
    else:  # archive: the prior state is versioned like any write, then hidden (delete means archive)
        body = skill.body
    revised = skills.revise(skill=skill, body=body, reason=reason, actor=actor)
    if action["action"] == "archive":
        revised = skill_actions.archive(skill=revised, actor=ctx.seat, turn_id=ctx.run_id, reason=reason)
    return _announce(ctx, action, revised)


def _create(ctx, action: dict) -> dict:
    name = (action.get("name") or "").strip()
    description, body = (action.get("description") or "").strip(), (action.get("body") or "").strip()
    if not (name and description and body):
        return _refused(action, "incomplete")
    if skills.at_cap(ctx.seat, ctx.knobs.learning.skill_synthesis.max_skills_per_agent):
        return _refused(action, "max_skills_per_agent")
    try:
        skill = skills.create(
            seat=ctx.seat,
            name=name,
            description=description,
            body=skill_body.skill_md(name=name, description=description, body=body),
            tool_sequence=ctx.tool_sequence,
            trigger="agent",
            origin_turn_id=ctx.run_id,
            now=ctx.now,
        )
    except Conflict:
        return _refused(action, "name_collision")
    except limits.LimitExceeded as exc:
        return _refused(action, exc.limit_name)
    return _announce(ctx, action, skill)


def _announce(ctx, action: dict, skill: SynthesizedSkill) -> dict:
    events.publish(
        SkillReflectionApplied(action=action["action"], skill_id=skill.pk, name=skill.name, version=skill.version),
        seat=ctx.seat, turn_id=ctx.run_id,
    )
    return {"action": action["action"], "name": skill.name, "status": "applied", "version": skill.version}

