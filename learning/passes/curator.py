"""The skill curator: active -> stale -> archived on disuse; pinned skills are exempt.

A skill's clock is its last-used stamp (a skill never used counts from its creation). Stale ->
archived runs before active -> stale, so a skill is listed with its ageing marker for at least one
tick before the listings hide it. An archive window inside the stale window is widened to it.
Revival (stale -> active) happens on use, in ``skills.mark_used``, not here.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.db.models.functions import Coalesce
from django.utils import timezone

from core import events
from crewlet import config
from crewlet.models import Seat
from learning.events import SkillArchived, SkillStaled
from learning.models import SynthesizedSkill

log = logging.getLogger("learning.passes.curator")


def windows(knobs) -> tuple[int, int, bool]:
    """(stale_after_days, archive_after_days, widened): an archive window never inside the stale one."""
    stale, archive = knobs.stale_after_days, knobs.archive_after_days
    return stale, max(stale, archive), archive < stale


def unused_since(queryset: QuerySet, cutoff: datetime) -> QuerySet:
    return queryset.annotate(clock=Coalesce("last_used_at", "created_at")).filter(clock__lte=cutoff)


def _transition(*, seat: Seat, src: str, dst: str, days: int, now: datetime, event: type[SkillStaled | SkillArchived], dry_run: bool) -> int:
    candidates = unused_since(
        SynthesizedSkill.objects.filter(seat=seat, state=src, pinned=False), now - timedelta(days=days)
    )
    if dry_run:
        return candidates.count()
    with transaction.atomic():
        # locked, so a use landing now (mark_used) waits and sees the new state, or we see its stamp
        moved = list(candidates.select_for_update().values("id", "name", "clock"))
        if moved:
            SynthesizedSkill.objects.filter(id__in=[m["id"] for m in moved]).update(state=dst, updated_at=now)
    for m in moved:
        events.publish(event(skill_id=m["id"], name=m["name"], unused_days=(now - m["clock"]).days, after_days=days), seat=seat)
    return len(moved)


def curate_seat(seat: Seat, *, now: datetime, dry_run: bool = False) -> dict:
    knobs = config.knobs_for_seat(seat).learning.skill_curator
    if not knobs.enabled:
        return {"seat": seat.handle, "skipped": "skill_curator.enabled is false"}
    stale_days, archive_days, widened = windows(knobs)
    if widened:
        log.warning(
            "seat %s: archive_after_days %d is inside stale_after_days %d; widened to %d",
            seat.handle, knobs.archive_after_days, stale_days, archive_days,
        )
    common: dict[str, Any] = {"seat": seat, "now": now, "dry_run": dry_run}
    archived = _transition(
        src=SynthesizedSkill.STALE, dst=SynthesizedSkill.ARCHIVED, days=archive_days, event=SkillArchived, **common
    )
    staled = _transition(
        src=SynthesizedSkill.ACTIVE, dst=SynthesizedSkill.STALE, days=stale_days, event=SkillStaled, **common
    )
    return {"seat": seat.handle, "staled": staled, "archived": archived, "archive_window_widened": widened}


def run_curator(*, seat: Seat | None = None, now: datetime | None = None, dry_run: bool = False, progress=None) -> dict:
    """One pass over every active seat (or one); returns the transitions it made (or would make)."""
    now = now or timezone.now()
    seats = [seat] if seat is not None else list(Seat.objects.filter(active=True).select_related("role"))
    results = []
    for s in seats:
        results.append(curate_seat(s, now=now, dry_run=dry_run))
        if progress:
            progress(1, s.handle)
    return {
        "dry_run": dry_run,
        "seats": len(results),
        "staled": sum(r.get("staled", 0) for r in results),
        "archived": sum(r.get("archived", 0) for r in results),
        "results": results,
    }
