"""Every background loop, declared once by name, and how the schedules follow config applies.

The loops are the process's and the passes are the revision's: every schedule is installed
whatever the company configures (``manage.py install_schedules``, idempotent), and each tick asks
the config in force whether its pass is on — a pass that is off claims no duty, and one a
revision turns on runs at its loop's next tick. An apply keeps a loop's clock unless it changed
that loop's cadence, which then starts over from the apply. No schedule is due at install: the
first tick is one cadence away, so nothing fires because a process (or the fleet) started.
"""

from __future__ import annotations

import inspect
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.utils import timezone
from django.utils.module_loading import import_string

from crewlet.config import schema

log = logging.getLogger("learning.passes.schedules")

RETENTION_INTERVAL_SECONDS = 3600  # the short-horizon tables' sweep; theirs is a day, an hour bounds the overshoot
EMBED_FILL_INTERVAL_SECONDS = 60  # "once a minute"
REFLECT_SWEEP_INTERVAL_SECONDS = 60  # the backlog sweep; each tick re-drives at most SWEEP_LIMIT turns


@dataclass(frozen=True)
class Loop:
    name: str  # the pass's name on the command line; the schedule is ``learning.<name>``, its duty the same
    service: str  # dotted path of the pass itself
    cadence: Callable[[schema.Config], int]  # seconds
    enabled: Callable[[schema.Config], bool]

    @property
    def schedule_name(self) -> str:
        return f"learning.{self.name}"

    @property
    def task(self) -> str:
        return f"learning.passes.ticks.{self.name}"

    def minutes(self, cfg: schema.Config) -> int:
        return max(1, math.ceil(self.cadence(cfg) / 60))


def _learning_on(cfg: schema.Config) -> bool:
    return cfg.learning.enabled and cfg.company.learning_enabled


LOOPS: dict[str, Loop] = {
    loop.name: loop
    for loop in (
        Loop(
            "lifecycle",
            "learning.passes.lifecycle.run_lifecycle",
            cadence=lambda c: c.learning.episode_lifecycle.interval_seconds,
            enabled=lambda c: _learning_on(c) and c.learning.episode_lifecycle.enabled,
        ),
        Loop(
            "curator",
            "learning.passes.curator.run_curator",
            cadence=lambda c: c.learning.skill_curator.interval_hours * 3600,
            enabled=lambda c: _learning_on(c) and c.learning.skill_curator.enabled,
        ),
        Loop(
            "clustering",
            "learning.passes.clustering.run_clustered_synthesis",
            cadence=lambda c: c.learning.skill_synthesis.scheduler_interval_seconds,
            enabled=lambda c: _learning_on(c)
            and c.learning.skill_synthesis.enabled
            and c.learning.skill_synthesis.scheduler_enabled,
        ),
        Loop(
            "embed_fill",
            "learning.passes.embed_fill.run_fill",
            cadence=lambda c: EMBED_FILL_INTERVAL_SECONDS,
            enabled=lambda c: c.providers.embeddings.kind != "none",
        ),
        Loop(
            "retention",
            "learning.passes.retention.run_retention",
            cadence=lambda c: RETENTION_INTERVAL_SECONDS,
            enabled=lambda c: True,
        ),
        Loop(
            "event_retention",
            "core.event_retention.sweep",
            cadence=lambda c: RETENTION_INTERVAL_SECONDS,  # each family's horizon is days; an hour bounds the overshoot
            enabled=lambda c: True,
        ),
        Loop(
            "reflect_sweep",
            "learning.reflection.sweep.run_sweep",
            cadence=lambda c: REFLECT_SWEEP_INTERVAL_SECONDS,
            enabled=lambda c: True,  # a turn stored is a turn owed its pass, whatever the config says now
        ),
        Loop(
            "promotion",
            "learning.passes.promotion.run_promotion",
            cadence=lambda c: c.learning.promotion.interval_hours * 3600,
            enabled=lambda c: _learning_on(c) and c.learning.promotion.enabled,
        ),
    )
}


def service(name: str) -> Callable[..., dict]:
    """The pass's function, by its dotted path (every pass is part of this build)."""
    return import_string(LOOPS[name].service)


def accepts(fn: Callable, argument: str) -> bool:
    return argument in inspect.signature(fn).parameters


# ---- installing the schedules ------------------------------------------------------------------


def install(*, cfg: schema.Config, now: datetime | None = None) -> dict[str, str]:
    """Create or update each loop's schedule by name; returns ``{schedule: created|updated|unchanged}``."""
    from django_q.models import Schedule

    now = now or timezone.now()
    outcome = {}
    for loop in LOOPS.values():
        minutes = loop.minutes(cfg)
        existing = Schedule.objects.filter(name=loop.schedule_name).order_by("id")
        row = existing.first()
        if row is None:
            Schedule.objects.create(
                name=loop.schedule_name,
                func=loop.task,
                schedule_type=Schedule.MINUTES,
                minutes=minutes,
                repeats=-1,
                next_run=now + timedelta(minutes=minutes),
            )
            outcome[loop.schedule_name] = "created"
            continue
        existing.exclude(pk=row.pk).delete()  # one schedule a name
        changed = _align(row, loop, minutes, now)
        outcome[loop.schedule_name] = "updated" if changed else "unchanged"
    return outcome


def _align(row, loop: Loop, minutes: int, now: datetime) -> bool:
    """Bring a schedule to its declaration; a changed cadence starts its clock over from now."""
    from django_q.models import Schedule

    fields = []
    if row.func != loop.task or row.schedule_type != Schedule.MINUTES or row.repeats != -1:
        row.func, row.schedule_type, row.repeats = loop.task, Schedule.MINUTES, -1
        fields += ["func", "schedule_type", "repeats"]
    if row.minutes != minutes:
        row.minutes, row.next_run = minutes, now + timedelta(minutes=minutes)
        fields += ["minutes", "next_run"]
    if fields:
        row.save(update_fields=fields)
    return bool(fields)


def on_config_applied(old: schema.Config, new: schema.Config) -> list[str]:
    """A config listener: restart the clock only of loops whose cadence the apply changed."""
    changed = [loop for loop in LOOPS.values() if loop.minutes(old) != loop.minutes(new)]
    if not changed:
        return []
    from django.db import DatabaseError
    from django_q.models import Schedule

    now, restarted = timezone.now(), []
    try:
        for loop in changed:
            row = Schedule.objects.filter(name=loop.schedule_name).order_by("id").first()
            if row is not None and _align(row, loop, loop.minutes(new), now):
                restarted.append(loop.schedule_name)
    except (DatabaseError, RuntimeError):  # no database here (or none yet): the next install aligns it
        log.warning("schedules could not follow the config apply", exc_info=True)
        return restarted
    if restarted:
        log.info("cadence changed; clocks restarted for %s", ", ".join(restarted))
    return restarted


def connect() -> None:
    """Register the listener once per process (called from the app's ``ready``)."""
    global _connected
    from crewlet import config

    if not _connected:
        config.on_apply(on_config_applied)
        _connected = True


_connected = False
