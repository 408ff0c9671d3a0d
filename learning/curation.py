"""A lead's curation of synthesized skills: roll back, pin/unpin, archive/restore.

Each is one action that changes the skill through ``learning.skills`` and records an
``admin_action`` event naming the acting user, in one transaction, so a change nobody can
attribute never lands and an attribution for a change that did not land is never written.
"""

from __future__ import annotations

from django.db import transaction

from core import events
from core.event_types import AdminAction
from crewlet.errors import Forbidden
from learning import skills
from learning.models import SynthesizedSkill

CURATE_PERMISSION = "learning.change_synthesizedskill"


def can_curate(user) -> bool:
    return bool(user and user.is_active and user.has_perm(CURATE_PERMISSION))


def _actor(user) -> str:
    if not can_curate(user):
        raise Forbidden(f"{getattr(user, 'username', 'anonymous')} lacks the {CURATE_PERMISSION} permission")
    return user.get_username()


def _record(skill: SynthesizedSkill, *, action: str, username: str, **detail) -> None:
    events.publish(
        AdminAction(
            user=username, action=action, object=f"learning.synthesizedskill:{skill.pk}",
            detail={"skill_id": skill.pk, "name": skill.name, "version": skill.version, **detail},
        ),
        seat=skill.seat,
    )


def rollback_skill(*, skill: SynthesizedSkill, to_version: int, user) -> SynthesizedSkill:
    """Roll back as a forward step: version ``to_version``'s body becomes a new, higher version."""
    username = _actor(user)
    with transaction.atomic():
        from_version = skill.version
        skill = skills.rollback(skill=skill, to_version=to_version, actor=username)
        _record(skill, action="rollback", username=username, from_version=from_version, to_version=to_version)
    return skill


def set_skill_pinned(*, skill: SynthesizedSkill, pinned: bool, user) -> SynthesizedSkill:
    """Pinned skills are exempt from every automatic transition; only a person pins."""
    username = _actor(user)
    with transaction.atomic():
        skill = skills.set_pinned(skill=skill, pinned=pinned)
        _record(skill, action="pin" if pinned else "unpin", username=username)
    return skill


def archive_skill(*, skill: SynthesizedSkill, user) -> SynthesizedSkill:
    username = _actor(user)
    with transaction.atomic():
        previous = skill.state
        skill = skills.set_state(skill=skill, state=SynthesizedSkill.ARCHIVED, actor=username)
        _record(skill, action="archive", username=username, previous_state=previous)
    return skill


def restore_skill(*, skill: SynthesizedSkill, user) -> SynthesizedSkill:
    username = _actor(user)
    with transaction.atomic():
        previous = skill.state
        skill = skills.set_state(skill=skill, state=SynthesizedSkill.ACTIVE, actor=username)
        _record(skill, action="restore", username=username, previous_state=previous)
    return skill
