"""The Searcher seam: ``can_search`` (no I/O) and ``search`` -> ``SearchResult(pages, served_mode)``.

``served_mode`` empty means the search did not run (the backend could not be reached, or there
was nothing it was allowed to search), which is not "nothing found": callers render a different
sentence for each. Auto-drafts are excluded by every backend. The backend is resolved from
``knowledge.backend`` by alias and cached; ``reset_searcher()`` drops it (tests).

Read scope is the org-wide ``knowledge.scope`` list: the spec's "no per-unit/role union" (a unit's
container is where its drafts are written, not what its seats read).
"""

from __future__ import annotations

import enum
import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from core import events
from crewlet import config
from crewlet.config.schema import KnowledgeBackend
from knowledge.events import KnowledgePageRef, KnowledgeRead

if TYPE_CHECKING:
    from crewlet.models import Seat

log = logging.getLogger("knowledge.searcher")

SEARCH_KNOWLEDGE_LIMIT = 5  # pages the search_knowledge tool answers with
QUERY_EMBED_BUDGET = 2.0  # seconds: knowledge QueryEmbedBudget, "a turn starting"
MAX_QUERY_CHARS = 500  # a keyword query, not a document

BACKENDS: dict[KnowledgeBackend, str] = {
    "native": "knowledge.backends.native.NativeSearcher",
    "confluence": "knowledge.backends.confluence.ConfluenceSearcher",
    "none": "knowledge.searcher.NoSearcher",
}


@dataclass(frozen=True)
class PageHit:
    title: str
    snippet: str
    page_id: str
    container_key: str
    url: str = ""


class SearchUnavailable(enum.Enum):
    """Why a search did not run; each has a sentence that claims nothing about what exists."""

    UNCONFIGURED = "unconfigured"
    SCOPED_TO_NOTHING = "scoped_to_nothing"
    UNREACHABLE = "unreachable"

    def sentence(self, detail: str = "") -> str:
        why = {
            SearchUnavailable.UNCONFIGURED: "no knowledge backend is configured for this company",
            SearchUnavailable.SCOPED_TO_NOTHING: (
                "nothing is in this seat's read scope (knowledge.scope is empty) and the seat has no "
                "knowledge-base credentials of its own for an unscoped search"
            ),
            SearchUnavailable.UNREACHABLE: "the knowledge backend could not be reached just now",
        }[self]
        extra = f" ({detail})" if detail else ""
        return (
            f"The knowledge base could not be searched: {why}{extra}. This says nothing about whether "
            "a page exists, so do not conclude it does not and write a duplicate."
        )


@dataclass(frozen=True)
class SearchResult:
    pages: list[PageHit] = field(default_factory=list)
    served_mode: str = ""
    unavailable: SearchUnavailable | None = None
    detail: str = ""

    @property
    def ran(self) -> bool:
        return bool(self.served_mode)

    @classmethod
    def not_run(cls, reason: SearchUnavailable, detail: str = "") -> SearchResult:
        return cls(pages=[], served_mode="", unavailable=reason, detail=detail)


class Searcher(Protocol):
    def unavailable(self, seat: Seat) -> SearchUnavailable | None:
        """Why this seat cannot search, or None; reads config and the environment only (no I/O)."""

    def can_search(self, seat: Seat) -> bool: ...

    def search(self, seat: Seat, query: str, limit: int) -> SearchResult: ...


class NoSearcher:
    """``knowledge.backend = "none"``: nothing is wired, every search says it is unconfigured."""

    def unavailable(self, seat: Seat) -> SearchUnavailable | None:
        return SearchUnavailable.UNCONFIGURED

    def can_search(self, seat: Seat) -> bool:
        return False

    def search(self, seat: Seat, query: str, limit: int) -> SearchResult:
        return SearchResult.not_run(SearchUnavailable.UNCONFIGURED, "knowledge.backend is \"none\"")


def accessible_containers(seat: Seat | None = None) -> list[str]:
    """The containers any seat may read: the org-wide ``knowledge.scope``, in order, deduplicated."""
    return list(dict.fromkeys(key for key in config.current().knowledge.scope if key))


_lock = threading.Lock()
_cached: tuple | None = None


def get_searcher() -> Searcher:
    """The configured backend, cached until ``[knowledge]`` changes; a bad alias raises naming it."""
    global _cached
    spec = config.current().knowledge
    with _lock:
        if _cached is None or _cached[0] != spec:
            path = BACKENDS.get(spec.backend)
            if path is None:
                raise ImproperlyConfigured(
                    f"knowledge.backend: unknown backend {spec.backend!r} (known: {', '.join(sorted(BACKENDS))})"
                )
            _cached = (spec, import_string(path)())
        return _cached[1]


def reset_searcher() -> None:
    global _cached
    with _lock:
        _cached = None


def can_search(seat: Seat) -> bool:
    """Whether a search could return anything for this seat (no I/O)."""
    return get_searcher().can_search(seat)


def search(seat: Seat, query: str, limit: int, *, via: str = "search", turn_id: str = "", record: bool = True) -> SearchResult:
    """Run one search for ``seat``; never raises (best-effort by contract) and records ``knowledge_read``.

    ``record=False`` is for a caller that publishes its own ``knowledge_read`` (the prefetch block).
    """
    searcher = get_searcher()
    reason = searcher.unavailable(seat)
    if reason is not None:
        result = SearchResult.not_run(reason)
    else:
        try:
            result = searcher.search(seat, query, limit)
        except Exception as exc:  # the seam is best-effort: a broken backend never fails a turn
            log.warning("knowledge search failed for %s: %s", getattr(seat, "handle", seat), exc, exc_info=True)
            result = SearchResult.not_run(SearchUnavailable.UNREACHABLE, type(exc).__name__)
    if record:
        record_read(seat=seat, via=via, query=query, result=result, turn_id=turn_id)
    return result


def read_event(*, via: str, query: str, result: SearchResult, pages=None) -> KnowledgeRead:
    """The one ``knowledge_read`` shape, for this module and the prefetch block (``pages``: the ones shown)."""
    return KnowledgeRead(
        via=via,
        query=query,
        served_mode=result.served_mode,
        unavailable=result.unavailable.value if result.unavailable else "",
        pages=[KnowledgePageRef(page_id=str(p.page_id), title=p.title, container_key=p.container_key)
               for p in (result.pages if pages is None else pages)],
    )


def record_read(*, seat: Seat, via: str, query: str, result: SearchResult, turn_id: str = "") -> None:
    """Publish ``knowledge_read`` naming the pages reached (telemetry: a failed write is swallowed)."""
    try:
        events.publish(read_event(via=via, query=query, result=result), seat=seat, turn_id=turn_id)
    except Exception:  # telemetry never breaks the read it measures
        log.warning("knowledge_read could not be recorded", exc_info=True)


def render_hits(pages: list[PageHit]) -> str:
    lines = []
    for page in pages:
        where = f" ({page.url})" if page.url else ""
        lines.append(f"- {page.title} [{page.container_key}, page {page.page_id}]{where}")
        if page.snippet:
            lines.append(f"  {page.snippet}")
    return "\n".join(lines)


@dataclass(frozen=True)
class KnowledgeAnswer:
    """The ``search_knowledge`` tool's answer: ``ok`` only when a search ran (found or not)."""

    ok: bool
    text: str


def search_knowledge_answer(
    seat: Seat, query: str, *, limit: int = SEARCH_KNOWLEDGE_LIMIT, turn_id: str = ""
) -> KnowledgeAnswer:
    """The pages, "nothing matched", or why the search could not run (not ok: nothing is known either way)."""
    query = (query or "").strip()
    if not query:
        return KnowledgeAnswer(False, "search_knowledge needs a query: a few keywords describing what you are looking for.")
    if len(query) > MAX_QUERY_CHARS:
        return KnowledgeAnswer(
            False, f"The query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}. Send a few keywords."
        )
    result = search(seat, query, limit, via="search_knowledge", turn_id=turn_id)
    if not result.ran:
        return KnowledgeAnswer(False, (result.unavailable or SearchUnavailable.UNREACHABLE).sentence(result.detail))
    if not result.pages:
        return KnowledgeAnswer(True, (
            f'The knowledge base was searched for "{query}" and no published page in your readable '
            "containers matched. Try other keywords before concluding it is not written down."
        ))
    header = f'Knowledge-base pages for "{query}" ({len(result.pages)}):'
    return KnowledgeAnswer(True, f"{header}\n{render_hits(result.pages)}")
