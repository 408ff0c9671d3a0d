"""``use_skill``: load one of your synthesized skills' SKILL.md body, verbatim.

Archived skills are refused (listings hide them, the loader refuses them); loading a stale one
revives it in the same transaction as the use. Each load publishes ``skill_used``. The use stamp is
telemetry: a stamp that cannot be written is logged and the body is still answered.
"""

from __future__ import annotations

import logging

from django.db import DatabaseError
from pydantic import Field

from core import events
from crewlet.errors import Conflict, NotFound
from learning.events import SkillUsed
from learning.memory import skills
from learning.models import SynthesizedSkill
from learning.tools.base import Arguments, Text, Tool, ToolCall, ToolResult

log = logging.getLogger("learning.tools")


class UseSkillArgs(Arguments):
    name: Text = Field(..., min_length=1, max_length=120, description="The skill's name as the skills block lists it.")


def handle(call: ToolCall[UseSkillArgs]) -> ToolResult:
    try:
        skill = skills.find(call.seat, call.args.name)
    except NotFound as exc:
        raise NotFound(exc.message, field="arguments.name") from None
    if skill.state == SynthesizedSkill.ARCHIVED:
        raise Conflict(f"skill {skill.name!r} is archived and cannot be loaded", field="arguments.name")
    revived = skill.state == SynthesizedSkill.STALE
    try:
        skills.mark_used([skill.id], seat=call.seat, turn_id=call.run_id)
    except DatabaseError:  # best effort: the load is what the agent asked for
        log.warning("use stamp of skill %s failed for %s", skill.id, call.seat.handle, exc_info=True)
    events.publish(
        SkillUsed(source_kind="synthesized", skill_id=skill.id, name=skill.name, version=skill.version),
        seat=call.seat, turn_id=call.run_id,
    )
    return ToolResult(ok=True, text=skill.body,
                      data={"skill_id": skill.id, "name": skill.name, "version": skill.version, "revived": revived})


TOOL = Tool(
    name="use_skill",
    description="Load the full steps of one of your synthesized skills by name when its listed description fits "
    "the task in front of you.",
    arguments=UseSkillArgs,
    handler=handle,
)
