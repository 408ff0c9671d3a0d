"""The knowledge Searcher seam as the prefetch and ``search_knowledge`` see it.

``knowledge.searcher`` is imported lazily: where it is not installed, no searcher is wired —
``can_search`` is False and ``search_knowledge`` answers with the unconfigured sentence rather
than an empty result the agent would have to interpret.
"""

from __future__ import annotations

import importlib
import logging

log = logging.getLogger("learning.prefetch")

SEARCHER_MODULE = "knowledge.searcher"

NO_SEARCHER_ANSWER = (
    "No knowledge search is wired for this company (no knowledge backend is configured), so there is "
    "nothing to search. Nothing can be concluded about which pages exist; your own memory still works "
    "(refresh_memory, query_episodes)."
)
SEARCH_FAILED_ANSWER = (
    "The knowledge base could not be searched just now (the backend did not answer), so nothing is known "
    "either way about which pages exist. Try again shortly before concluding a page is missing."
)


def searcher():
    """The Searcher module, or None where none is wired."""
    try:
        return importlib.import_module(SEARCHER_MODULE)
    except ModuleNotFoundError as exc:
        if exc.name in (SEARCHER_MODULE, "knowledge"):
            return None
        raise


def can_search(seat) -> bool:
    """Whether a search could return anything for this seat (no I/O)."""
    module = searcher()
    if module is None:
        return False
    try:
        return bool(module.can_search(seat))
    except Exception:
        log.warning("can_search failed for %s", seat.handle, exc_info=True)
        return False


def search(seat, query: str, limit: int):
    """The Searcher's result, or None where no searcher is wired. Best effort by the seam's contract."""
    module = searcher()
    if module is None:
        return None
    if hasattr(module, "record_read"):  # the real searcher: this block publishes knowledge_read itself
        return module.search(seat, query, limit, via="relevant_knowledge", record=False)
    return module.search(seat, query, limit)


def search_knowledge_answer(seat, query: str) -> str:
    module = searcher()
    if module is None:
        return NO_SEARCHER_ANSWER
    try:
        return module.search_knowledge_answer(seat, query)
    except Exception:
        log.warning("search_knowledge failed for %s", seat.handle, exc_info=True)
        return SEARCH_FAILED_ANSWER
