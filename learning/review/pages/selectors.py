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
from django.utils import timezone

from core import events
from crewlet.errors import BadInput, NotFound
from crewlet.models import Seat
from learning.events import ReflectionCompleted
from learning.memory import diary
from learning.models import CounterpartyProfile, Episode, SynthesizedSkill
from learning.review.pages import gates

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

    @property
    def label(self) -> str:
        return gates.worker_name(self.worker)

    @property
    def why(self) -> str:
        return gates.why(self.gate)


@dataclass(frozen=True)
class Reflection:
    at: datetime
    turn_id: str
    gate: str | None
    workers: list[WorkerLine]

    @property
    def why(self) -> str:
        return gates.why(self.gate or "")

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


SEARCH_PAGE_SIZE = 20  # rows of each kind on one page of results
SEARCH_POOL = 500  # ranked rows of each kind counted and paged through
SEARCH_EMBED_BUDGET = 2.0  # seconds: a person is waiting on the search box


@dataclass(frozen=True)
class SearchResults:
    """One page of a search: each kind's rows on this page, and each kind's count of matches."""

    query: str
    notes: list = field(default_factory=list)
    episodes: list = field(default_factory=list)
    profiles: list = field(default_factory=list)
    skills: list = field(default_factory=list)
    counts: dict = field(default_factory=dict)  # kind -> rows matched
    page: int = 1
    pages: int = 1
    by_meaning: bool = False  # the query was embedded, so notes and episodes were ranked by meaning too

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def previous_page(self) -> int | None:
        return self.page - 1 if self.page > 1 else None

    @property
    def next_page(self) -> int | None:
        return self.page + 1 if self.page < self.pages else None


def _words(fields: tuple[str, ...], words: list[str], *, every: bool) -> Q:
    """Rows holding every word of the query (``every``) or any of them, each in one of ``fields``."""
    condition = Q()
    for word in words:
        in_a_field = Q()
        for name in fields:
            in_a_field |= Q(**{f"{name}__icontains": word})
        condition = (condition & in_a_field) if every else (condition | in_a_field)
    return condition


def _with_a_word(queryset, ids: list[int], fields: tuple[str, ...], words: list[str]) -> list[int]:
    """``ids`` in their order, keeping the rows that hold at least one of the words: a row the
    recall reached by meaning alone is near the query, not a match a lead searched for."""
    holding = set(queryset.filter(pk__in=ids).filter(_words(fields, words, every=False)).values_list("pk", flat=True))
    return [i for i in ids if i in holding]


def _then(ranked: list[int], more) -> list[int]:
    seen = set(ranked)
    return (list(ranked) + [i for i in more if i not in seen])[:SEARCH_POOL]


def _in_order(model_rows, ids: list[int]) -> list:
    by_id = {row.pk: row for row in model_rows}
    return [by_id[i] for i in ids if i in by_id]


def search(*, seat: Seat, query: str, page: int | str = 1) -> SearchResults:
    """The seat's memory searched by the query's words (and its meaning, when it can be embedded).

    Notes and episodes are ranked by the agents' own hybrid recall (``diary.recall_ids``,
    ``episode_search.ranked``), keeping the rows that hold a word of the query, then any other row
    holding every word; profiles and skills, which no recall ranks, match when they hold every word.
    Each kind is counted and paged alike. Notes and episodes are ranked by the query's words while it
    embeds.
    """
    from core.providers.embeddings import embed_one_beside
    from core.words import search_words
    from learning.memory import episode_search

    q = " ".join((query or "").split())
    if not q:
        return SearchResults("")
    if len(q) > 200:
        raise BadInput("q: a search is at most 200 characters")
    try:
        page = int(page or 1)
    except (TypeError, ValueError):
        raise BadInput("page: a page number is a whole number from 1") from None
    if page < 1:
        raise BadInput("page: a page number is a whole number from 1")
    words = search_words(q)
    now = timezone.now()

    def by_words(model: str, dim: int) -> dict[str, list[tuple[int, float]]]:  # while the query embeds
        return {"notes": diary.by_words(seat=seat, model=model, dim=dim, query=q, now=now, shortlist=SEARCH_POOL),
                "episodes": episode_search.by_words(seat=seat, model=model, dim=dim, query=q, shortlist=SEARCH_POOL)}

    embedded, ranked_words = embed_one_beside(q, by_words, budget=SEARCH_EMBED_BUDGET)
    ranked_words = ranked_words or {}
    vector, model = embedded.vector, embedded.model
    note_fields, episode_fields = ("content",), ("task_summary", "ask", "plan_summary", "common_task_pattern")
    note_ids = episode_ids = []
    if vector:
        note_ids = diary.recall_ids(seat=seat, vector=vector, model=model, query=q, limit=SEARCH_POOL, now=now,
                                    ranked_words=ranked_words.get("notes"))
        episode_ids = [i for i, _ in episode_search.ranked(seat=seat, vector=vector, model=model, query=q,
                                                           limit=SEARCH_POOL,
                                                           ranked_words=ranked_words.get("episodes")).rows]
        note_ids = _with_a_word(diary.live(seat), note_ids, note_fields, words)
        episode_ids = _with_a_word(Episode.objects.filter(seat=seat), episode_ids, episode_fields, words)
    # then every row holding all the words that the recall left out (one not embedded yet, a compacted turn)
    note_ids = _then(note_ids, diary.live(seat).filter(_words(note_fields, words, every=True))
                     .order_by("-created_at", "-id").values_list("pk", flat=True)[:SEARCH_POOL])
    episode_ids = _then(episode_ids, Episode.objects.filter(seat=seat).filter(_words(episode_fields, words, every=True))
                        .order_by("-started_at", "-id").values_list("pk", flat=True)[:SEARCH_POOL])
    profile_ids = list(CounterpartyProfile.objects.filter(observer=seat).filter(
        _words(("subject_handle", "display_name", "communication_style"), words, every=True))
        .order_by("-updated_at", "-id").values_list("pk", flat=True)[:SEARCH_POOL])
    skill_ids = list(SynthesizedSkill.objects.filter(seat=seat).filter(
        _words(("name", "description", "body"), words, every=True))
        .order_by("-use_count", "name").values_list("pk", flat=True)[:SEARCH_POOL])
    found = {"notes": note_ids, "episodes": episode_ids, "profiles": profile_ids, "skills": skill_ids}
    counts = {kind: len(ids) for kind, ids in found.items()}
    pages = max(1, -(-max(counts.values()) // SEARCH_PAGE_SIZE))
    if page > pages:
        raise BadInput(f"page: the search has {pages} page{'s' if pages != 1 else ''}")
    shown = {kind: ids[(page - 1) * SEARCH_PAGE_SIZE: page * SEARCH_PAGE_SIZE] for kind, ids in found.items()}
    return SearchResults(
        q,
        notes=_in_order(diary.live(seat).filter(pk__in=shown["notes"]), shown["notes"]),
        episodes=_in_order(Episode.objects.filter(seat=seat, pk__in=shown["episodes"]).defer("embedding"),
                           shown["episodes"]),
        profiles=_in_order(CounterpartyProfile.objects.filter(pk__in=shown["profiles"]), shown["profiles"]),
        skills=_in_order(SynthesizedSkill.objects.filter(pk__in=shown["skills"]), shown["skills"]),
        counts=counts, page=page, pages=pages, by_meaning=bool(vector),
    )


def note_of(*, seat: Seat, pk: int):
    note = diary.live(seat).filter(pk=pk).first()
    if note is None:
        raise NotFound(f"seat {seat.handle} has no live note {pk}")
    return note


def seat_skills(*, seat: Seat) -> list:
    """The drill-down from a seat: every skill with its uses, newest use first."""
    return list(SynthesizedSkill.objects.filter(seat=seat).order_by("-use_count", "name"))
