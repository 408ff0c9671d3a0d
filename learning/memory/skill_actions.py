"""The one way to pin, unpin, archive, restore or roll back a synthesized skill.

Each action takes who acts (``*, actor``): a person (a lead holding ``learning.change_synthesizedskill``)
or a seat (an agent, only on its own skills). The change and its ``admin_action`` audit event, naming
the actor, are written in one transaction, so a change nobody can attribute never lands and an
attribution for a change that did not land is never written. The automatic transitions (the
curator's stale / archive, a use reviving a stale skill) are the system's own and announce
themselves with ``skill_staled`` / ``skill_archived`` / ``skill_revived``.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from core import admin_log, events
from core.event_types import AdminAction
from crewlet.errors import Forbidden, NotFound
from crewlet.models import Seat
from learning.memory import skills
from learning.models import SynthesizedSkill

CURATE_PERMISSION = "learning.change_synthesizedskill"


def can_curate(user) -> bool:
    return bool(user and user.is_active and user.has_perm(CURATE_PERMISSION))


def actor_name(actor: Any, skill: SynthesizedSkill) -> str:
    """Who the audit names; refuses a person without the permission or a seat acting on another's skill."""
    if isinstance(actor, Seat):
        if actor.pk != skill.seat_id:
            raise Forbidden(f"seat {actor.handle} cannot change another seat's skill {skill.name!r}")
        return f"agent:{actor.handle}"
    if not can_curate(actor):
        raise Forbidden(f"{getattr(actor, 'username', 'anonymous')} lacks the {CURATE_PERMISSION} permission")
    return actor.get_username()


def _record(skill: SynthesizedSkill, *, action: str, by: Any, actor: str, turn_id: str = "", **detail) -> None:
    """The audit event, and for a person (not a seat) the admin's Recent actions entry, in the caller's transaction."""
    if not isinstance(by, Seat):
        admin_log.log_action(by, skill, MESSAGES[action].format(**{"version": skill.version, **detail}))
    events.publish(
        AdminAction(
            user=actor, action=action, object=f"learning.synthesizedskill:{skill.pk}",
            detail={"skill_id": skill.pk, "name": skill.name, "version": skill.version, **detail},
        ),
        seat=skill.seat,
        turn_id=turn_id,
    )


MESSAGES = {
    "pin": "Pinned the skill",
    "unpin": "Unpinned the skill",
    "archive": "Archived the skill",
    "restore": "Restored the skill",
    "rollback": "Rolled back to v{to_version} (now v{version})",
}


def _set(skill: SynthesizedSkill, **fields) -> SynthesizedSkill:
    for name, value in fields.items():
        setattr(skill, name, value)
    skill.save(update_fields=[*fields, "updated_at"])
    return skill


def rollback(*, skill: SynthesizedSkill, to_version: int, actor, reason: str = "") -> SynthesizedSkill:
    """Roll back as a forward step: version ``to_version``'s body becomes a new, higher version."""
    name = actor_name(actor, skill)
    archived = skill.versions.filter(version=to_version).first()
    if archived is None:
        raise NotFound(f"skill {skill.name!r} has no archived version {to_version}")
    with transaction.atomic():
        from_version = skill.version
        skill = skills.revise(
            skill=skill, body=archived.body, description=archived.description,
            reason=reason or f"rollback to v{to_version}", actor=name,
        )
        _record(skill, action="rollback", by=actor, actor=name, from_version=from_version, to_version=to_version)
    return skill


def pin(*, skill: SynthesizedSkill, actor) -> SynthesizedSkill:
    """Pinned skills are exempt from every automatic transition."""
    name = actor_name(actor, skill)
    with transaction.atomic():
        _record(_set(skill, pinned=True), action="pin", by=actor, actor=name)
    return skill


def unpin(*, skill: SynthesizedSkill, actor) -> SynthesizedSkill:
    name = actor_name(actor, skill)
    with transaction.atomic():
        _record(_set(skill, pinned=False), action="unpin", by=actor, actor=name)
    return skill


def archive(*, skill: SynthesizedSkill, actor, turn_id: str = "", reason: str = "") -> SynthesizedSkill:
    """Hidden from the seat's catalogue; its history is kept (restore brings it back)."""
    name = actor_name(actor, skill)
    with transaction.atomic():
        previous = skill.state
        _set(skill, state=SynthesizedSkill.ARCHIVED)
        _record(skill, action="archive", by=actor, actor=name, turn_id=turn_id, previous_state=previous,
                **({"reason": reason} if reason else {}))
    return skill


def restore(*, skill: SynthesizedSkill, actor) -> SynthesizedSkill:
    name = actor_name(actor, skill)
    with transaction.atomic():
        previous = skill.state
        _record(_set(skill, state=SynthesizedSkill.ACTIVE), action="restore", by=actor, actor=name, previous_state=previous)
    return skill
