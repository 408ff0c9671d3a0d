"""Reads for a seat's Memory tab: four paged sections with their counted totals, and the latest reflection.

Each section is one ``Section`` (the rows of one page, the total, the filter that produced it),
so the template and the htmx partial render the same object. A filter value the section does not
know is refused rather than ignored, so a page never claims a total it did not filter for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.core.paginator import Paginator
from django.db.models import Q, QuerySet

from core import events
from core.event_types import ReflectionCompleted
from crewlet.errors import BadInput, NotFound
from crewlet.models import Seat
from learning import diary
from learning.models import CounterpartyProfile, Episode, SynthesizedSkill

MEMORY_PAGE_SIZE = 10
ALL = ""


@dataclass(frozen=True)
class SectionSpec:
    name: str
    title: str
    filter_param: str
    choices: tuple[tuple[str, str], ...]  # (value, label); "" is every row


SECTIONS = {
    "diary": SectionSpec("diary", "Diary", "kind", ((ALL, "all"), ("diary_long", "long"), ("diary_short", "short"))),
    "episodes": SectionSpec("episodes", "Episodes", "kind", ((ALL, "all"), ("raw", "raw"), ("compacted", "compacted"))),
    "skills": SectionSpec(
        "skills", "Synthesized skills", "state", (("listed", "listed"), ("archived", "archived"), (ALL, "all"))
    ),
    "profiles": SectionSpec("profiles", "Counterparty profiles", "platform", ((ALL, "all"),)),
}


@dataclass
class Section:
    spec: SectionSpec
    rows: list
    total: int
    page: int
    num_pages: int
    selected: str
    choices: tuple = field(default_factory=tuple)

    @property
    def has_previous(self) -> bool:
        return self.page > 1

    @property
    def has_next(self) -> bool:
        return self.page < self.num_pages

    @property
    def first_index(self) -> int:
        return 0 if self.total == 0 else (self.page - 1) * MEMORY_PAGE_SIZE + 1

    @property
    def last_index(self) -> int:
        return min(self.page * MEMORY_PAGE_SIZE, self.total)


def seat_by_handle(handle: str) -> Seat:
    seat = Seat.objects.select_related("unit", "role").filter(handle=handle).first()
    if seat is None:
        raise NotFound(f"no seat with handle {handle!r}")
    return seat


def _diary(seat: Seat, selected: str) -> QuerySet:
    qs = diary.live(seat)
    return (qs.filter(kind=selected) if selected else qs).order_by("-created_at", "-id")


def _episodes(seat: Seat, selected: str) -> QuerySet:
    qs = Episode.objects.filter(seat=seat)
    return (qs.filter(kind=selected) if selected else qs).order_by("-started_at", "-id")


def _skills(seat: Seat, selected: str) -> QuerySet:
    qs = SynthesizedSkill.objects.filter(seat=seat)
    if selected == "listed":
        qs = qs.exclude(state=SynthesizedSkill.ARCHIVED)
    elif selected == "archived":
        qs = qs.filter(state=SynthesizedSkill.ARCHIVED)
    return qs.order_by("-pinned", "-use_count", "name")


def _profiles(seat: Seat, selected: str) -> QuerySet:
    qs = CounterpartyProfile.objects.filter(observer=seat)
    return (qs.filter(subject_platform=selected) if selected else qs).order_by("-observations", "subject_handle", "id")


QUERIES = {"diary": _diary, "episodes": _episodes, "skills": _skills, "profiles": _profiles}


def _choices(spec: SectionSpec, seat: Seat) -> tuple:
    if spec.name != "profiles":
        return spec.choices
    platforms = (
        CounterpartyProfile.objects.filter(observer=seat).exclude(subject_platform="")
        .values_list("subject_platform", flat=True).distinct().order_by("subject_platform")
    )
    return spec.choices + tuple((p, p) for p in platforms)


def section(*, seat: Seat, name: str, page: int = 1, selected: str | None = None) -> Section:
    """One page of one section, with the total the filter counts (not the page's length)."""
    spec = SECTIONS.get(name)
    if spec is None:
        raise NotFound(f"the memory tab has no section {name!r}")
    selected = spec.choices[0][0] if selected is None else selected
    choices = _choices(spec, seat)
    if selected not in {value for value, _label in choices}:
        raise BadInput(f"{spec.filter_param}: {selected!r} is not one of {[v for v, _ in choices]}")
    paginator = Paginator(QUERIES[name](seat, selected), MEMORY_PAGE_SIZE, allow_empty_first_page=True)
    page_obj = paginator.get_page(page)
    return Section(
        spec=spec,
        rows=list(page_obj.object_list),
        total=paginator.count,
        page=page_obj.number,
        num_pages=paginator.num_pages,
        selected=selected,
        choices=choices,
    )


@dataclass(frozen=True)
class WorkerLine:
    """One worker's outcome as the tab shows it: ran, stopped at a gate (normal), or failed (an error)."""

    worker: str
    status: str  # "ran" | "skipped" | "failed"
    gate: str = ""
    error: str = ""


@dataclass(frozen=True)
class Reflection:
    at: datetime
    turn_id: str
    gate: str | None
    workers: list[WorkerLine]

    @property
    def skipped(self) -> list[WorkerLine]:
        return [w for w in self.workers if w.status == "skipped"]

    @property
    def failed(self) -> list[WorkerLine]:
        return [w for w in self.workers if w.status == "failed"]


def _line(worker: str, outcome) -> WorkerLine:
    return WorkerLine(worker, outcome.status, getattr(outcome, "gate", ""), getattr(outcome, "error", ""))


def latest_reflection(seat: Seat) -> Reflection | None:
    found = events.latest(ReflectionCompleted, seat=seat)
    if found is None:
        return None
    walked = [_line(name, outcome) for name, outcome in found.event.walked()]
    return Reflection(at=found.at, turn_id=found.turn_id, gate=found.event.gate, workers=walked)


def memory_tab(*, seat: Seat) -> dict:
    """The whole tab's first render: every section's first page and the latest reflection."""
    return {
        "seat": seat,
        "sections": [section(seat=seat, name=name) for name in SECTIONS],
        "reflection": latest_reflection(seat),
    }


SEARCH_LIMIT = 50


@dataclass(frozen=True)
class SearchResults:
    query: str
    notes: list
    episodes: list
    profiles: list

    @property
    def total(self) -> int:
        return len(self.notes) + len(self.episodes) + len(self.profiles)


def search(*, seat: Seat, query: str) -> SearchResults:
    """Case-insensitive text search over the seat's live notes, its episodes and its counterparty profiles."""
    q = " ".join((query or "").split())
    if not q:
        return SearchResults("", [], [], [])
    if len(q) > 200:
        raise BadInput("q: a search is at most 200 characters")
    notes = diary.live(seat).filter(content__icontains=q).order_by("-created_at", "-id")[:SEARCH_LIMIT]
    episodes = Episode.objects.filter(seat=seat).filter(
        Q(task_summary__icontains=q) | Q(ask__icontains=q) | Q(plan_summary__icontains=q) | Q(common_task_pattern__icontains=q)
    ).order_by("-started_at", "-id")[:SEARCH_LIMIT]
    profiles = CounterpartyProfile.objects.filter(observer=seat).filter(
        Q(subject_handle__icontains=q) | Q(display_name__icontains=q) | Q(communication_style__icontains=q)
    ).order_by("-updated_at", "-id")[:SEARCH_LIMIT]
    return SearchResults(q, list(notes), list(episodes), list(profiles))


def note_of(*, seat: Seat, pk: int):
    note = diary.live(seat).filter(pk=pk).first()
    if note is None:
        raise NotFound(f"seat {seat.handle} has no live note {pk}")
    return note


def seat_skills(*, seat: Seat) -> list:
    """The drill-down from a seat: every skill with its uses, newest use first."""
    return list(SynthesizedSkill.objects.filter(seat=seat).order_by("-use_count", "name"))
