"""``refine_skill``: replace one of your own skills' body, whole, when it has gone stale.

Versioned (the prior state is archived, the version bumped); a body past ``max_body_chars`` is
refused naming the field, never clipped. Withdrawn entirely when
``learning.skill_refinement.enabled`` is false (``learning.tool_names.withdrawn``): the tool and the
post-turn refiner write the same rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from core import events
from crewlet.errors import Conflict, NotFound
from learning import limits
from learning.events import SkillRefined
from learning.memory import skills
from learning.models import SynthesizedSkill
from learning.tools.base import Arguments, Text, Tool, ToolCall, ToolResult, refuse_field

if TYPE_CHECKING:
    from crewlet.models import Seat

REASON_CHARS = 300  # the archived version's reason column


class RefineSkillArgs(Arguments):
    skill_name: Text = Field(..., min_length=1, max_length=120, description="The name of one of your own skills.")
    content: Text = Field(..., min_length=1, max_length=limits.MAX_SKILL_BODY_CHARS,
                          description="The whole corrected SKILL.md body; it replaces the old one.")
    reason: Text | None = Field(None, max_length=REASON_CHARS, description="Why the skill needed correcting.")


def own_skill(seat: Seat, name: str) -> SynthesizedSkill:
    try:
        skill = skills.find(seat, name)
    except NotFound as exc:
        raise NotFound(exc.message, field="arguments.skill_name") from None
    if skill.state == SynthesizedSkill.ARCHIVED:
        raise Conflict(f"skill {name!r} is archived; an operator can restore it", field="arguments.skill_name")
    return skill


def handle(call: ToolCall[RefineSkillArgs]) -> ToolResult:
    args = call.args
    skill = own_skill(call.seat, args.skill_name)
    try:
        revised = skills.revise(skill=skill, body=args.content, reason=args.reason or "refine_skill",
                                actor=f"seat:{call.seat.handle}")
    except limits.LimitExceeded as exc:
        raise refuse_field(exc, "arguments.content") from None
    events.publish(
        SkillRefined(skill_id=revised.id, name=revised.name, version=revised.version, source="refine_skill",
                     reason=args.reason or ""),
        seat=call.seat, turn_id=call.run_id,
    )
    return ToolResult(ok=True, data={"skill_id": revised.id, "version": revised.version}, text=(
        f"Skill {revised.name} is now version {revised.version}; the previous body is kept as "
        f"version {revised.version - 1}."))


TOOL = Tool(
    name="refine_skill",
    description="Correct one of your own skills as soon as you find it wrong or out of date, by sending its whole "
    "corrected body; don't wait to be asked.",
    arguments=RefineSkillArgs,
    handler=handle,
)
