"""The native backend: pages in our own tables, searched by meaning and words fused by rank (``core.hybrid``).

A search sees published pages in the readable containers, never a draft, the Auto-Drafted Skills
parent, anything beneath it, or an ``[Auto-draft]`` title. Words are matched against a generated
``tsvector`` in which the title weighs more than the body. A query that cannot be embedded within
the knowledge search's budget is still searched by its words (``served_mode`` "text"), and a page
without a vector of the query's model is still found by its words.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from django.db import DatabaseError, IntegrityError

from core import hybrid
from core.providers.embeddings import begin_embed_one
from core.words import search_words
from knowledge.models import AUTO_DRAFT_PREFIX, AUTO_DRAFTED_PARENT, Page
from knowledge.pages import is_auto_draft, save_page
from knowledge.promotion_writer import (
    DRAFTS_PARENT_BODY,
    PROMOTION_AUTHOR,
    Draft,
    DraftRefused,
    WriteFailed,
    WriteOutcome,
    render_markdown,
)
from knowledge.searcher import (
    QUERY_EMBED_BUDGET,
    PageHit,
    SearchResult,
    SearchUnavailable,
    accessible_containers,
)
from knowledge.tool_skill_pages import RegistryPage

if TYPE_CHECKING:
    from crewlet.models import Seat

log = logging.getLogger("knowledge.native")

NATIVE_MAX_DISTANCE = 0.7  # cosine distance: past this a page is not "similar" (it may still be found by words)
MAX_QUERY_WORDS = 8
CORPUS = hybrid.Corpus(table="knowledge_page")
SNIPPET_CHARS = 240
EXCLUDED_PARENT_DEPTH = 4  # ancestors checked in SQL; deeper chains are checked per hit in Python


def visible_pages(containers: list[str]):
    """Published, non-draft pages in ``containers``: what any search may return."""
    qs = (
        Page.objects.filter(container_key__in=containers, state=Page.PUBLISHED)
        .exclude(title=AUTO_DRAFTED_PARENT)
        .exclude(title__startswith=AUTO_DRAFT_PREFIX)
    )
    lookup = "parent__title"
    for _ in range(EXCLUDED_PARENT_DEPTH):
        qs = qs.exclude(**{lookup: AUTO_DRAFTED_PARENT})
        lookup = "parent__" + lookup
    return qs


def query_words(query: str) -> list[str]:
    """What the full-text half is given of a query, as for episodes and notes (``core.words.search_words``): its
    content words ("CI on main is red again, can you fix it?" -> main, red, again, fix), its words when it has
    nothing else; "on", "is", "can", "you" matched every page."""
    return search_words(query, limit=MAX_QUERY_WORDS)


def ranked(qs, query: str, limit: int) -> tuple[list[int], bool]:
    """Ids of the visible pages best by meaning and words fused, and whether the query had a vector. The
    pages are ranked by the query's words while it embeds (their scope holds no vector's model or width)."""
    pending = begin_embed_one(query, budget=QUERY_EMBED_BUDGET)
    words = query_words(query)
    scope_sql, scope_params = qs.values("id").query.sql_with_params()
    scope = f"t.id IN ({scope_sql})"
    by_words = hybrid.by_words(CORPUS, scope=scope, scope_params=scope_params, words=words,
                               shortlist=max(hybrid.SHORTLIST, int(limit)))
    result = pending.results(here_if_unstarted=True)[0]
    if result.vector is None and not words:
        return [], False
    ids = [page_id for page_id, _score in hybrid.ranked(
        CORPUS, scope=scope, scope_params=scope_params, vector=result.vector, model=result.model, words=words,
        limit=limit, max_distance=NATIVE_MAX_DISTANCE, ranked_words=by_words)]
    return ids, result.vector is not None


def snippet(body: str, words: list[str]) -> str:
    """A preview around the first query word found (a rendering, not stored content)."""
    flat = " ".join(body.split())
    lower = flat.lower()
    hits = [i for i in (lower.find(w) for w in words) if i >= 0]
    start = max(0, min(hits) - SNIPPET_CHARS // 3) if hits else 0
    piece = flat[start : start + SNIPPET_CHARS]
    return ("…" if start else "") + piece + ("…" if start + SNIPPET_CHARS < len(flat) else "")


def to_hit(page: Page, words: list[str]) -> PageHit:
    return PageHit(
        title=page.title, snippet=snippet(page.body, words), page_id=str(page.pk), container_key=page.container_key
    )


class NativeSearcher:
    def tool_skill_pages(self, *, container_key: str, parent: str) -> list[RegistryPage]:
        """The published children of the registry's parent page (native pages are Markdown already)."""
        rows = Page.objects.filter(container_key=container_key, parent__title=parent, state=Page.PUBLISHED)
        return [RegistryPage(str(p.pk), p.container_key, p.title, p.body) for p in rows.order_by("title", "id")]

    def unavailable(self, seat: Seat) -> SearchUnavailable | None:
        return None if accessible_containers(seat) else SearchUnavailable.SCOPED_TO_NOTHING

    def can_search(self, seat: Seat) -> bool:
        return self.unavailable(seat) is None

    def search(self, seat: Seat, query: str, limit: int) -> SearchResult:
        containers = accessible_containers(seat)
        if not containers:
            return SearchResult.not_run(SearchUnavailable.SCOPED_TO_NOTHING)
        try:
            ids, had_vector = ranked(visible_pages(containers), query, limit * 2)
            pages = Page.objects.in_bulk(ids)
        except DatabaseError as exc:
            log.warning("native knowledge search could not read the pages: %s", exc)
            return SearchResult.not_run(SearchUnavailable.UNREACHABLE, "the knowledge tables could not be read")
        words = query_words(query)
        hits = [to_hit(pages[i], words) for i in ids if i in pages and not is_auto_draft(pages[i])]
        return SearchResult(pages=hits[:limit], served_mode="hybrid" if had_vector else "text")


def _outcome(page: Page, *, existed: bool) -> WriteOutcome:
    return WriteOutcome(page_id=str(page.pk), page_title=page.title, container_key=page.container_key, existed=existed)


class NativePromotionWriter:
    """Drafts as ``Page`` rows (state draft) under the container's Auto-Drafted Skills parent."""

    def existing(self, *, container_key: str, title: str) -> WriteOutcome | None:
        """A page already holding this cluster: the draft, or the page a lead published from it."""
        titles = [f"{AUTO_DRAFT_PREFIX} {title}", title]
        page = Page.objects.filter(container_key=container_key, title__in=titles).order_by("id").first()
        return _outcome(page, existed=True) if page else None

    def ensure_parent(self, container_key: str) -> Page:
        parent = Page.objects.filter(container_key=container_key, title=AUTO_DRAFTED_PARENT).first()
        if parent is not None:
            return parent
        return save_page(
            container_key=container_key, title=AUTO_DRAFTED_PARENT, body=DRAFTS_PARENT_BODY, author=PROMOTION_AUTHOR
        )

    def write_draft(self, *, container_key: str, draft: Draft) -> WriteOutcome:
        found = self.existing(container_key=container_key, title=draft.title)
        if found is not None:
            return found
        try:
            parent = self.ensure_parent(container_key)
        except DatabaseError as exc:
            raise DraftRefused(
                f"the {AUTO_DRAFTED_PARENT!r} parent could not be created in {container_key} ({exc}); "
                "the draft is not filed at the container root"
            ) from exc
        try:
            page = save_page(
                container_key=container_key,
                title=draft.draft_title,
                body=render_markdown(draft),
                parent=parent,
                state=Page.DRAFT,
                author=PROMOTION_AUTHOR,
                labels=["auto-draft"],
                source=draft.source,
            )
        except IntegrityError as exc:  # another writer filed the same title first
            found = self.existing(container_key=container_key, title=draft.title)
            if found is not None:
                return found
            raise WriteFailed(f"draft {draft.draft_title!r} could not be written: {exc}") from exc
        except DatabaseError as exc:
            raise WriteFailed(f"draft {draft.draft_title!r} could not be written: {exc}") from exc
        return _outcome(page, existed=False)
