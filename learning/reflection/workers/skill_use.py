"""SkillUse: every skill the turn's prompt offered is marked used; a stale one is revived with it."""

from __future__ import annotations

from core.models import Event
from crewlet.config.schema import Learning
from learning.events import SkillUsed
from learning.memory import skills
from learning.reflection.turn_context import TurnContext
from learning.reflection.worker import Prepared, Result


class Marked(Result):
    """How many offered skills were counted as used by the turn."""

    marked: int


class SkillUse:
    """SkillUse: the offered skills marked used."""

    name = "skill_use"

    def wired(self, learning: Learning) -> bool:
        return learning.enabled

    def applies(self, ctx: TurnContext) -> str | None:
        return None if ctx.skills_offered else "no_offered_skills"

    def run(self, ctx: TurnContext) -> Prepared:
        """Nothing to ask or embed: the whole worker is its write."""

        def write() -> Marked:
            # a skill the agent loaded with use_skill this turn was counted then: a turn counts a skill once
            loaded = set(Event.objects.filter(name=SkillUsed.NAME, seat=ctx.seat, turn_id=ctx.run_id)
                         .values_list("payload__skill_id", flat=True)) if ctx.run_id else set()
            rest = [i for i in ctx.skills_offered if i not in loaded]
            return Marked(marked=skills.mark_used(rest, seat=ctx.seat, turn_id=ctx.run_id, now=ctx.now) if rest else 0)

        return write
