"""Reading a seat's memory for people and dashboards: each section a page with its counted total.

Every answer names who gave it (``held_by``): here one shared database holds every seat's memory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db.models import Count, OuterRef, Q, Subquery
from django.utils import timezone

from core import events
from learning.events import ReflectionCompleted
from learning.memory import diary, onboarding
from learning.models import CounterpartyProfile, DiaryEntry, Episode, SynthesizedSkill

if TYPE_CHECKING:
    from crewlet.models import Seat


HELD_BY = "database:postgresql"


def held_by() -> str:
    return HELD_BY


def _page(qs, *, limit: int, offset: int, project) -> dict:
    return {"total": qs.count(), "limit": limit, "offset": offset, "items": [project(r) for r in qs[offset : offset + limit]]}


def note_out(e: DiaryEntry) -> dict:
    return {"id": e.id, "kind": e.kind, "content": e.content, "created_at": e.created_at, "ttl_until": e.ttl_until,
            "source": e.source, "use_count": e.use_count, "last_retrieved_at": e.last_retrieved_at,
            "has_vector": bool(e.embedding_model)}


def episode_out(e: Episode) -> dict:
    return {"id": e.id, "kind": e.kind, "turn_id": e.run_id, "woken_by": e.task_summary, "ask": e.ask,
            "what_it_did": e.plan_summary, "tool_sequence": list(e.tool_sequence or []),
            "review_outcome": e.review_outcome, "started_at": e.started_at, "ended_at": e.ended_at, "count": e.count,
            "common_task_pattern": e.common_task_pattern, "success_rate": e.success_rate}


def skill_out(s: SynthesizedSkill) -> dict:
    return {"id": s.id, "name": s.name, "description": s.description, "version": s.version, "state": s.state,
            "pinned": s.pinned, "use_count": s.use_count, "last_used_at": s.last_used_at, "created_at": s.created_at}


def profile_out(p: CounterpartyProfile) -> dict:
    return {"id": p.id, "subject_handle": p.subject_handle, "subject_external_id": p.subject_external_id,
            "subject_platform": p.subject_platform, "display_name": p.display_name,
            "communication_style": p.communication_style, "past_decisions": p.past_decisions,
            "sensitivities": p.sensitivities, "topics": p.topics, "observations": p.observations,
            "updated_at": p.updated_at}


def latest_reflection(seat: Seat) -> dict | None:
    found = events.latest(ReflectionCompleted, seat=seat)
    if found is None:
        return None
    return {"turn_id": found.turn_id, "at": found.at, "payload": found.event.model_dump(mode="json")}


def agent_memory(*, seat: Seat, limit: int, offset: int) -> dict:
    return {
        "handle": seat.handle,
        "held_by": held_by(),
        "diary": _page(diary.live(seat).order_by("-created_at", "-id"), limit=limit, offset=offset, project=note_out),
        "episodes": _page(Episode.objects.filter(seat=seat).order_by("-ended_at", "-id"), limit=limit, offset=offset,
                          project=episode_out),
        "skills": _page(SynthesizedSkill.objects.filter(seat=seat).order_by("state", "name", "id"), limit=limit,
                        offset=offset, project=skill_out),
        "profiles": _page(CounterpartyProfile.objects.filter(observer=seat).order_by("-updated_at", "-id"),
                          limit=limit, offset=offset, project=profile_out),
        "latest_reflection": latest_reflection(seat),
        "onboarded_at": onboarding.onboarded_at(seat),
    }


def _counts(qs, key: str, seat_ids) -> dict:
    return dict(qs.filter(**{f"{key}__in": seat_ids}).values(key).annotate(n=Count("id")).values_list(key, "n"))


def _live_notes():
    now = timezone.now()
    return DiaryEntry.objects.filter(Q(ttl_until__isnull=True) | Q(ttl_until__gt=now))


def _newest_notes(seat_ids) -> dict:
    """Each seat's newest live note, in two queries whatever the number of seats."""
    newest = _live_notes().filter(seat=OuterRef("pk")).order_by("-created_at", "-id").values("id")[:1]
    from crewlet.models import Seat

    picked = Seat.objects.filter(id__in=seat_ids).annotate(note_id=Subquery(newest)).values_list("note_id", flat=True)
    rows = DiaryEntry.objects.filter(id__in=[i for i in picked if i is not None]).only("id", "seat_id", "content", "created_at")
    return {e.seat_id: e for e in rows}


def overview(*, company) -> dict:
    """Every seat's totals and newest note, in one round of grouped counts (a bounded number of queries)."""
    seats = list(company.seats.select_related("role").order_by("handle"))
    ids = [s.id for s in seats]
    notes = _counts(_live_notes(), "seat", ids)
    eps = _counts(Episode.objects.all(), "seat", ids)
    sks = _counts(SynthesizedSkill.objects.all(), "seat", ids)
    profs = _counts(CounterpartyProfile.objects.all(), "observer", ids)
    newest_of = _newest_notes([i for i in ids if notes.get(i)])
    agents = []
    for s in seats:
        newest = newest_of.get(s.id)
        agents.append({
            "handle": s.handle, "active": s.active, "role": s.role.name if s.role else None,
            "totals": {"diary": notes.get(s.id, 0), "episodes": eps.get(s.id, 0), "skills": sks.get(s.id, 0),
                       "profiles": profs.get(s.id, 0)},
            "newest_note": {"content": newest.content, "created_at": newest.created_at} if newest else None,
            "held_by": held_by(),
        })
    return {"company": company.name, "agents": agents, "coverage": {"answered": [held_by()], "missing": []}}
