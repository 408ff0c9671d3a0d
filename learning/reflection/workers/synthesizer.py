"""Synthesizer, single-turn induction: a settled turn with enough tools is offered for a skill draft.

Every gate sits before the model call, because a draft made only to be discarded is money spent for
nothing: the per-seat cap, and a duplicate check of the turn's tool SET against the seat's skills
by Jaccard (order-insensitive: a permutation of one procedure is the same skill). A draft without a
name, summary or body is dropped; a name the seat already has is rejected by the collision guard.
"""

from __future__ import annotations

import logging

from django.db.models.functions import Substr

from core import auxiliary, events
from crewlet.config.schema import Learning
from crewlet.errors import Conflict
from crewlet.models import Seat
from learning import limits, procedures, skill_body
from learning.events import SkillSynthesized
from learning.memory import skills
from learning.models import Episode
from learning.purposes import skill_draft
from learning.purposes.describe import turn_inputs
from learning.reflection.turn_context import TurnContext
from learning.reflection.worker import Prepared, Result

log = logging.getLogger("learning.reflection.workers.synthesizer")


def _alike(tools, skill_tools, threshold: float) -> bool:
    return bool(skill_tools) and procedures.jaccard(tools, skill_tools) >= threshold


def duplicate_of(seat: Seat, tools, threshold: float):
    """The seat's skill (archived included) whose tool set is at least ``threshold`` alike, or None."""
    for skill in skills.held(seat).only("id", "name", "tool_sequence"):
        if _alike(tools, skill.tool_sequence, threshold):
            return skill
    return None


def _held_tools(seat: Seat, cap: int) -> list:
    """The tool sequences of at most ``cap`` of the seat's skills, archived included: ``skills.at_cap``
    (fewer than ``cap`` rows: every skill held) and ``duplicate_of``'s question in ONE read."""
    if cap <= 0:
        return []
    return list(skills.held(seat).order_by("id").values_list("tool_sequence", flat=True)[:cap])


PRIOR_ASKS = 3  # the newest alike runs' asks shown to the drafter beside the turn's own
PRIOR_ASK_CHARS = 500


def prior_runs(ctx) -> list[str]:
    """Earlier raw turns of this seat whose tool set is as alike as a cluster would pool: each one's ask (its
    label when it has none), newest first. What recurs across them is the class of work the skill is for: the
    turn alone may not name it ("Now the release branch is red too." after "CI on main is red, can you fix it?")."""
    knobs = ctx.knobs.learning.skill_synthesis
    rows = (
        Episode.objects.filter(seat=ctx.seat, kind=Episode.RAW)
        .exclude(run_id=ctx.run_id)
        .order_by("-ended_at", "-id")
        # each ask's head only: up to episode_fetch_limit rows are read, and a conversation's ask runs to kilobytes
        .annotate(ask_head=Substr("ask", 1, PRIOR_ASK_CHARS), label_head=Substr("task_summary", 1, PRIOR_ASK_CHARS))
        .values_list("tool_sequence", "ask_head", "label_head")[: knobs.episode_fetch_limit]
    )
    return [ask or label or "" for seq, ask, label in rows
            if seq and procedures.jaccard(ctx.tool_sequence, seq) >= knobs.cluster_jaccard_threshold]


def write_draft(*, seat: Seat, draft: skill_draft.Draft, tool_sequence, trigger: str, origin_turn_id: str = "",
                now=None):
    """Store a parsed draft, or return why not: (skill or None, reason)."""
    if draft.decline:
        return None, "declined"
    if draft.missing:
        log.info("skill draft for %s dropped: no %s", seat.handle, ", ".join(draft.missing))
        return None, "incomplete_draft"
    body = skill_body.skill_md(name=draft.name, description=draft.summary, body=draft.body)
    try:
        skill = skills.create(
            seat=seat, name=draft.name, description=draft.summary, body=body,
            tool_sequence=tool_sequence, trigger=trigger, origin_turn_id=origin_turn_id, now=now,
        )
    except Conflict:
        log.info("skill draft %r for %s rejected: the seat already has that name", draft.name, seat.handle)
        return None, "name_collision"
    except limits.LimitExceeded as exc:
        log.warning("skill draft %r for %s skipped: %s", draft.name, seat.handle, exc)
        return None, exc.limit_name
    return skill, "drafted"


class Drafted(Result):
    """The skill drafted from the turn, or why none was stored."""

    drafted: bool
    why: str | None = None
    reason: str | None = None
    skill_id: int | None = None
    name: str | None = None


class Synthesizer:
    """The Synthesizer: a new skill drafted from a turn's steps."""

    name = "synthesizer"

    def wired(self, learning: Learning) -> bool:
        return learning.enabled and learning.skill_synthesis.enabled

    def applies(self, ctx: TurnContext) -> str | None:
        knobs = ctx.knobs.learning.skill_synthesis
        if not knobs.enabled:
            return "synthesis_disabled"
        if not ctx.settled:
            return "unsettled"
        # distinct work tools the turn called: one tool five times is one, and the memory tools are none
        if len(set(procedures.procedure(ctx.tools_called))) < knobs.min_tool_calls:
            return "too_few_tools"
        cap = knobs.max_skills_per_agent
        held = _held_tools(ctx.seat, cap)
        if skills.full(len(held), cap):  # at most ``cap`` were read: as many as held, or enough to be full
            return "max_skills_per_agent"
        if any(_alike(ctx.tool_sequence, tools, knobs.duplicate_jaccard_threshold) for tools in held):
            return "duplicate_skill"
        if not auxiliary.available(ctx.seat):
            return "no_auxiliary_model"
        return None

    def run(self, ctx: TurnContext) -> Prepared:
        """The draft (the model call; no writes); returns the write that stores it."""
        turn = turn_inputs(ctx)
        prior = prior_runs(ctx)
        # the drafter sees the steps of the work: the memory and skill tools are how the agent learns, not steps
        turn.update(tool_sequence=procedures.procedure(ctx.tool_sequence), tools_called=procedures.procedure(ctx.tools_called))
        inputs = skill_draft.Inputs(**turn, mode="turn", prior_runs=len(prior), prior_asks=prior[:PRIOR_ASKS],
                                    existing_skills=[s.name for s in skills.catalogue(ctx.seat)])
        draft: skill_draft.Draft = ctx.consult(skill_draft.NAME, inputs)

        def write() -> Drafted:
            skill, why = write_draft(
                seat=ctx.seat, draft=draft, tool_sequence=procedures.procedure(ctx.tool_sequence), trigger="inline",
                origin_turn_id=ctx.run_id,
                now=ctx.now,
            )
            if skill is None:
                return Drafted(drafted=False, why=why, reason=draft.reason)
            events.publish(
                SkillSynthesized(trigger="inline", skill_id=skill.pk, name=skill.name, tool_sequence=skill.tool_sequence),
                seat=ctx.seat, turn_id=ctx.run_id,
            )
            return Drafted(drafted=True, skill_id=skill.pk, name=skill.name)

        return write
