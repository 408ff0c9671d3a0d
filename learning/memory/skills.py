"""Synthesized skills: create, revise (versioned), mark used (revives). Pin, archive, restore and roll back
are ``learning.memory.skill_actions`` (each audited, naming who acted).

Every change of a body archives the prior state to ``synthesized_skill_versions`` and bumps the
version; history is bounded by ``max_versions_kept``. The body cap is ``max_body_chars``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from django.db import DatabaseError, connection, transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from core import events
from core.scrub import scrub_secrets
from crewlet import config
from crewlet.errors import Conflict, NotFound
from learning import limits
from learning.events import SkillRevived, SkillTelemetryWriteFailed
from learning.models import SkillVersion, SynthesizedSkill

if TYPE_CHECKING:
    from crewlet.models import Seat

log = logging.getLogger("learning.memory.skills")


def catalogue(seat: Seat) -> QuerySet[SynthesizedSkill]:
    """The seat's listed skills: active and stale (archived ones are hidden)."""
    return SynthesizedSkill.objects.filter(seat=seat).exclude(state=SynthesizedSkill.ARCHIVED)


def held(seat: Seat) -> QuerySet[SynthesizedSkill]:
    """Every skill the seat holds, archived included: what the induction gates count, so an archived
    procedure is neither drafted again nor left out of the cap."""
    return SynthesizedSkill.objects.filter(seat=seat)


def full(held_count: int, cap: int) -> bool:
    """The rule of ``max_skills_per_agent``: a seat holding ``cap`` skills, archived ones counted, takes no new
    skill, however drafted."""
    return held_count >= cap


def at_cap(seat: Seat, cap: int) -> bool:
    return full(held(seat).count(), cap)


def find(seat: Seat, name: str) -> SynthesizedSkill:
    skill = SynthesizedSkill.objects.filter(seat=seat, name=name).first()
    if skill is None:
        raise NotFound(f"seat {seat.handle} has no skill named {name!r}")
    return skill


def create(
    *, seat: Seat, name: str, description: str, body: str, tool_sequence=(), trigger: str, origin_turn_id: str = "", now=None
) -> SynthesizedSkill:
    """Write a new skill; a name the seat already has is rejected (the collision guard)."""
    body, description = scrub_secrets(body), scrub_secrets(description)  # the one scrubber (core.scrub)
    knobs = config.knobs_for_seat(seat).learning.skill_refinement
    limits.check_skill_body(body, knobs.max_body_chars)
    if SynthesizedSkill.objects.filter(seat=seat, name=name).exists():
        raise Conflict(f"seat {seat.handle} already has a skill named {name!r}")
    return SynthesizedSkill.objects.create(
        seat=seat,
        name=name,
        description=description,
        body=body,
        tool_sequence=list(tool_sequence),
        trigger=trigger,
        origin_turn_id=origin_turn_id,
        created_at=now or timezone.now(),
        last_used_at=None,
    )


def _archive_version(skill: SynthesizedSkill, *, reason: str, actor: str, keep: int) -> None:
    SkillVersion.objects.create(
        skill=skill, version=skill.version, description=skill.description, body=skill.body, reason=reason, actor=actor
    )
    stale_ids = list(skill.versions.order_by("-version").values_list("id", flat=True)[keep:])
    if stale_ids:
        SkillVersion.objects.filter(id__in=stale_ids).delete()


def revise(
    *, skill: SynthesizedSkill, body: str, description: str | None = None, reason: str = "", actor: str = ""
) -> SynthesizedSkill:
    """Replace the body (whole), archiving the prior state; refuse past ``max_body_chars``."""
    body = scrub_secrets(body)  # the one scrubber (core.scrub): a model's or a lead's text may carry a secret
    description = scrub_secrets(description) if description is not None else None
    knobs = config.knobs_for_seat(skill.seat).learning.skill_refinement
    limits.check_skill_body(body, knobs.max_body_chars)
    with transaction.atomic():
        locked = SynthesizedSkill.objects.select_for_update().get(pk=skill.pk)
        _archive_version(locked, reason=reason, actor=actor, keep=knobs.max_versions_kept)
        locked.body = body
        if description is not None:
            locked.description = description
        locked.version = F("version") + 1
        locked.save(update_fields=["body", "description", "version", "updated_at"])
        locked.refresh_from_db()
    return locked


def mark_used(skill_ids, *, seat: Seat | None = None, turn_id: str = "", now=None, count: bool = True) -> int:
    """Bump use count and last-used; a stale skill is revived to active in the same transaction.

    ``count=False`` moves only the staleness clock; the count is bumped by ``use_skill`` and the
    post-turn SkillUse worker, so one offered turn counts once (the turn-start offer is ``stamp_offered``).
    """
    skill_ids = list(skill_ids)
    if not skill_ids:
        return 0
    now = now or timezone.now()
    with transaction.atomic():
        qs = SynthesizedSkill.objects.filter(id__in=skill_ids).exclude(state=SynthesizedSkill.ARCHIVED)
        if seat is not None:
            qs = qs.filter(seat=seat)
        revived = list(qs.filter(state=SynthesizedSkill.STALE).select_related("seat"))
        changes = {"last_used_at": now, **({"use_count": F("use_count") + 1} if count else {})}
        updated = qs.update(**changes)
        if revived:
            SynthesizedSkill.objects.filter(id__in=[s.id for s in revived]).update(state=SynthesizedSkill.ACTIVE)
    for skill in revived:
        events.publish(SkillRevived(skill_id=skill.id, name=skill.name), seat=skill.seat, turn_id=turn_id)
    return updated


# the turn-start stamp as one fixed statement (the ORM's UPDATE of the same rows, compiled once a
# turn, cost more than running it): the clock moves, stale turns active, archived is left alone
_TOUCH_SQL = (
    'UPDATE "{table}" SET last_used_at = %s, state = CASE WHEN state = %s THEN %s ELSE state END'
    " WHERE id IN ({ids}) AND seat_id = %s AND NOT (state = %s)"
)


def touch_offered(skill_ids, *, seat: Seat, now=None) -> int:
    """The turn-start stamp in ONE UPDATE: the last-used clock moves, a stale skill turns active (an
    archived one is left alone); the use count does not move (``use_skill`` and the SkillUse worker
    count uses)."""
    ids = [int(i) for i in skill_ids]
    if not ids:
        return 0
    sql = _TOUCH_SQL.format(table=SynthesizedSkill._meta.db_table, ids=", ".join(["%s"] * len(ids)))
    params = [connection.ops.adapt_datetimefield_value(now or timezone.now()), SynthesizedSkill.STALE,
              SynthesizedSkill.ACTIVE, *ids, seat.pk, SynthesizedSkill.ARCHIVED]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


class Offered(Protocol):
    """What the stamp reads of an offered skill: a skill, or the menu's row of one."""

    @property
    def id(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def state(self) -> str: ...


def stamp_offered(offered: Sequence[Offered], *, seat: Seat, turn_id: str = "", announce=None) -> bool:
    """Being offered is being used: ``offered`` as the catalogue read them, stamped without reading them
    again; each one read as stale is announced revived. A stamp that cannot be written is announced
    (``skill_telemetry_write_failed``), not swallowed. ``announce`` takes each event (default: publish it).
    """
    def _announce(event) -> None:
        if announce is not None:
            announce(event)
        else:
            events.publish(event, seat=seat, turn_id=turn_id)

    ids = [s.id for s in offered]
    try:
        with transaction.atomic():  # a savepoint: a failed stamp leaves the caller's transaction usable
            touch_offered(ids, seat=seat)
    except DatabaseError as exc:
        log.warning("skill use stamp failed for %s", seat.handle, exc_info=True)
        _announce(SkillTelemetryWriteFailed(skill_ids=ids, error=str(exc)))
        return False
    _announce_revived(offered, _announce)
    return True


def _announce_revived(offered: Sequence[Offered], announce) -> None:
    for skill in offered:
        if skill.state == SynthesizedSkill.STALE:
            announce(SkillRevived(skill_id=skill.id, name=skill.name))
