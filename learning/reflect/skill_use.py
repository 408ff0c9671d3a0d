"""SkillUse: every skill the turn's prompt offered is marked used; a stale one is revived with it."""

from __future__ import annotations

from learning import skills

NAME = "skill_use"


def wired(learning) -> bool:
    return learning.enabled


def applies(ctx) -> str | None:
    return None if ctx.skills_offered else "no_offered_skills"


def run(ctx):
    """Nothing to ask or embed: the whole worker is its write."""

    def write() -> dict:
        return {"marked": skills.mark_used(ctx.skills_offered, seat=ctx.seat, turn_id=ctx.run_id, now=ctx.now)}

    return write
