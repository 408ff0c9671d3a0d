"""Refiner, the auto path: after a settled turn that was offered skills, at most one bullet on one skill.

Only skills that still exist: the offered ids are intersected with the live catalogue, and a turn
whose skills are all archived costs no model call. A name the model invents is dropped rather than
matched to the nearest candidate. Every change archives the prior version and respects
``max_body_chars`` (skipped and logged here; the manual tool refuses instead).
"""

from __future__ import annotations

import logging

from core import auxiliary, events
from crewlet.config.schema import Learning
from learning import limits, skill_body
from learning.events import SkillRefined
from learning.memory import skills
from learning.purposes import skill_refinement
from learning.purposes.describe import turn_inputs
from learning.reflection.turn_context import TurnContext
from learning.reflection.worker import Prepared, Result

log = logging.getLogger("learning.reflection.workers.refiner")


def live_offered(ctx):
    """The offered skills still in the catalogue (read once a pass: the gate and the run share it)."""
    if "refiner_live" not in ctx.notes:
        ctx.notes["refiner_live"] = list(skills.catalogue(ctx.seat).filter(id__in=ctx.skills_offered).order_by("name"))
    return ctx.notes["refiner_live"]


class Refined(Result):
    """The skill revised with the turn's bullet, or why none was."""

    refined: bool
    why: str | None = None
    named: str | None = None  # a skill the bullet named that the turn was not offered
    skill_id: int | None = None
    name: str | None = None
    version: int | None = None


class Refiner:
    """The Refiner: one bullet on one offered skill."""

    name = "refiner"

    def wired(self, learning: Learning) -> bool:
        """``enabled: false`` leaves the refiner unbuilt; so does turning off both auto flags."""
        r = learning.enabled and learning.skill_refinement
        return bool(r and r.enabled and (r.auto_refine_on_success or r.auto_refine_on_failure))

    def applies(self, ctx: TurnContext) -> str | None:
        knobs = ctx.knobs.learning.skill_refinement
        if not self.wired(ctx.knobs.learning):
            return "refinement_disabled"
        if not ctx.settled:
            return "unsettled"
        if ctx.outcome == "done" and not knobs.auto_refine_on_success:
            return "auto_refine_on_success_off"
        if ctx.outcome == "failed" and not knobs.auto_refine_on_failure:
            return "auto_refine_on_failure_off"
        if not ctx.skills_offered:
            return "no_offered_skills"
        if not live_offered(ctx):
            return "no_live_skills"
        if not auxiliary.available(ctx.seat):
            return "no_auxiliary_model"
        return None

    def run(self, ctx: TurnContext) -> Prepared:
        """The bullet (the model call; no writes); returns the write that revises the skill."""
        live = {s.name: s for s in live_offered(ctx)}
        inputs = skill_refinement.Inputs(**turn_inputs(ctx), skills=[
            {"name": s.name, "description": s.description, "body": s.body, "tool_sequence": s.tool_sequence}
            for s in live.values()
        ])
        answer: skill_refinement.Refinement = ctx.consult(skill_refinement.NAME, inputs)
        if answer.noop:
            return Refined(refined=False, why="noop")
        skill = live.get(answer.skill)
        if skill is None:
            log.info("refiner dropped a bullet for %r: not a skill offered to %s", answer.skill, ctx.seat.handle)
            return Refined(refined=False, why="unknown_skill", named=answer.skill)
        line = skill_body.bullet(outcome=ctx.outcome, observation=answer.observation)

        def write() -> Refined:
            try:
                revised = skills.revise(
                    skill=skill, body=skill_body.append_practice(skill.body, line), reason=f"refiner: turn {ctx.run_id}",
                    actor="refiner",
                )
            except limits.LimitExceeded as exc:
                log.warning("refiner skipped %r for %s: %s", skill.name, ctx.seat.handle, exc)
                return Refined(refined=False, why=exc.limit_name)
            events.publish(
                SkillRefined(skill_id=revised.pk, name=revised.name, version=revised.version, bullet=line,
                             outcome=ctx.outcome),
                seat=ctx.seat, turn_id=ctx.run_id,
            )
            return Refined(refined=True, skill_id=revised.pk, name=revised.name, version=revised.version)

        return write
