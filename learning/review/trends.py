"""Learning over time: daily buckets computed in SQL, one series per question.

- prefetch hit rate: blocks that hit / blocks rendered, from each day's ``prefetch_summary`` events;
- skill uses: ``skill_used`` events of synthesized skills per day (an agent loading one of its skills);
- notes written: diary rows created per day (what is still stored: a forgotten or expired note is gone);
- uses per skill: the window's ``skill_used`` events of synthesized skills, grouped by skill.

A day with nothing recorded is ``None`` for a rate (unknown), 0 for a count.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING

from django.db.models import Count, IntegerField, Sum
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast, TruncDate
from django.utils import timezone

from core import events
from learning.events import PrefetchSummary, SkillUsed
from learning.models import DiaryEntry, SynthesizedSkill

if TYPE_CHECKING:
    from crewlet.models import Seat

WINDOW_DAYS_CHOICES = (7, 30, 90)
DEFAULT_WINDOW_DAYS = 30


@dataclass(frozen=True)
class Day:
    day: date
    value: float | None
    detail: str


def days(window_days: int, now: datetime | None = None) -> list[date]:
    today = timezone.localdate(now or timezone.now())
    return [today - timedelta(days=i) for i in range(window_days - 1, -1, -1)]


def _since(window_days: int, now: datetime | None) -> datetime:
    first = days(window_days, now)[0]
    return timezone.make_aware(datetime.combine(first, datetime.min.time()))


def _by_day(qs, **aggregates) -> dict[date, dict]:
    rows = qs.annotate(day=TruncDate("created_at")).values("day").annotate(**aggregates).order_by("day")
    return {row["day"]: row for row in rows}


def _int_key(key: str):
    return Cast(KeyTextTransform(key, "payload"), IntegerField())


def hit_rate(*, window_days: int, seat: Seat | None = None, now: datetime | None = None) -> list[Day]:
    qs = events.rows(PrefetchSummary, seat=seat, since=_since(window_days, now))
    found = _by_day(qs, turns=Count("id"), hits=Sum(_int_key("hits")), blocks=Sum(_int_key("block_count")))
    out = []
    for d in days(window_days, now):
        row = found.get(d)
        if not row or not row["blocks"]:
            out.append(Day(d, None, "no turn started"))
        else:
            out.append(Day(d, row["hits"] / row["blocks"], f"{row['hits']}/{row['blocks']} blocks hit over {row['turns']} turn(s)"))
    return out


def _counts(qs, window_days: int, now, noun: str) -> list[Day]:
    found = _by_day(qs, n=Count("id"))
    return [Day(d, found[d]["n"] if d in found else 0, f"{found[d]['n'] if d in found else 0} {noun}")
            for d in days(window_days, now)]


def skill_uses(*, window_days: int, seat: Seat | None = None, now: datetime | None = None) -> list[Day]:
    qs = events.rows(SkillUsed, seat=seat, since=_since(window_days, now)).filter(payload__source_kind="synthesized")
    return _counts(qs, window_days, now, "skill use(s)")


def notes_written(*, window_days: int, seat: Seat | None = None, now: datetime | None = None) -> list[Day]:
    qs = DiaryEntry.objects.filter(created_at__gte=_since(window_days, now))
    if seat is not None:
        qs = qs.filter(seat=seat)
    return _counts(qs, window_days, now, "note(s)")


@dataclass(frozen=True)
class SkillUses:
    skill_id: int
    name: str
    seat_handle: str  # "" once the skill is gone
    uses: int
    skill: SynthesizedSkill | None


def uses_per_skill(*, window_days: int, seat: Seat | None = None, now: datetime | None = None) -> list[SkillUses]:
    """Each synthesized skill used in the window with its count, most used first (counted in SQL)."""
    qs = events.rows(SkillUsed, seat=seat, since=_since(window_days, now)).filter(payload__source_kind="synthesized")
    counted = list(qs.annotate(skill_pk=_int_key("skill_id")).filter(skill_pk__isnull=False)
                   .values("skill_pk").annotate(uses=Count("id")).order_by("-uses", "skill_pk"))
    skills = SynthesizedSkill.objects.select_related("seat").in_bulk([row["skill_pk"] for row in counted])
    names = {} if len(skills) == len(counted) else _names_of_gone_skills(qs, set(skills))
    out = []
    for row in counted:
        skill = skills.get(row["skill_pk"])
        out.append(SkillUses(
            skill_id=row["skill_pk"], uses=row["uses"], skill=skill,
            name=skill.name if skill else names.get(row["skill_pk"], f"skill {row['skill_pk']}"),
            seat_handle=skill.seat.handle if skill else "",
        ))
    return out


def _names_of_gone_skills(qs, present: set[int]) -> dict[int, str]:
    """The name each use recorded, for a skill deleted since (its events outlive it)."""
    names: dict[int, str] = {}
    for payload in qs.values_list("payload", flat=True):
        skill_id = payload.get("skill_id")
        if skill_id is not None and skill_id not in present:
            names.setdefault(skill_id, payload.get("name") or "")
    return names
