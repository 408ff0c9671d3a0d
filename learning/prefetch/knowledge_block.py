"""## Relevant knowledge: a live knowledge-base search from a keyword query the auxiliary model writes.

Gated by ``can_search`` (no I/O) before any model call. A failed query generation shows nothing; a
search that did not run (``served_mode`` empty) renders ``UnsearchedKnowledgeHint``, never
``EmptyKnowledgeHint``, which is for a gated search or one that ran and found nothing. Each search
is one ``knowledge_read`` naming the pages shown, written with the turn start's other events.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from core import auxiliary
from knowledge import searcher
from knowledge.models import AUTO_DRAFT_PREFIX
from knowledge.searcher import PageHit
from learning.prefetch import bounds
from learning.prefetch.blocks import BlockResult, done
from learning.prefetch.hints import EmptyKnowledgeHint, UnsearchedKnowledgeHint
from learning.prefetch.turn_state import AuxDidNotAnswer, PrefetchContext
from learning.purposes import knowledge_query

log = logging.getLogger("learning.prefetch")

NAME = "relevant_knowledge"
HEADING = "## Relevant knowledge"
PREAMBLE = (
    "Pages from your team's knowledge base that may bear on this turn (title and snippet). To read a page "
    "in full or run a fresh search, use your knowledge-base tools."
)


def _hint(text: str, **extra) -> BlockResult:
    return BlockResult(NAME, f"{HEADING}\n{text}", selection_count=0, extra=extra)


def start(ctx: PrefetchContext):
    if not searcher.can_search(ctx.seat):
        return done(BlockResult(NAME, selection_count=0))
    if ctx.thin:
        return done(_hint(EmptyKnowledgeHint, knowledge_path="gated"))
    if not auxiliary.available(ctx.seat):
        return done(BlockResult(NAME, selection_count=0))
    future = ctx.submit(knowledge_query.NAME, knowledge_query.Inputs(ask=ctx.request.ask))
    return lambda: _finish(ctx, future)


def page_line(page: PageHit) -> str:
    where = page.url or f"{page.container_key} page {page.page_id}"
    snippet = " ".join(page.snippet.split())
    return f"- {page.title} — {snippet} ({where})" if snippet else f"- {page.title} ({where})"


def _finish(ctx: PrefetchContext, future) -> BlockResult:
    try:
        query = ctx.collect(future)
    except AuxDidNotAnswer:
        return BlockResult(NAME, selection_count=0)  # nothing to search with: show nothing
    if not query:
        return BlockResult(NAME, selection_count=0)  # the model answered that nothing is worth searching
    result = searcher.search(ctx.seat, query, bounds.KNOWLEDGE_PAGES, record=False)  # never raises
    # the backstop: an unvetted draft never reaches an agent, whatever a backend returns
    pages = [p for p in result.pages if not p.title.startswith(AUTO_DRAFT_PREFIX)][: bounds.KNOWLEDGE_PAGES]
    # written with the turn start's other events, in its one transaction
    ctx.announce(searcher.read_event(via=NAME, query=query, result=replace(result, pages=pages)))
    if not result.ran:
        return _hint(UnsearchedKnowledgeHint, knowledge_path="unsearched", query=query)
    if not pages:
        return _hint(EmptyKnowledgeHint, knowledge_path="empty", query=query)
    text = f"{HEADING}\n{PREAMBLE}\n" + "\n".join(page_line(p) for p in pages)
    return BlockResult(NAME, text, selection_count=len(pages), extra={"knowledge_path": "pages", "query": query})
