"""Team knowledge: the Searcher and PromotionWriter seams and their backends.

The public surface is the searcher's (no models are imported here, so the app loads cleanly):
callers use ``search`` / ``search_knowledge_answer`` and ``get_searcher().can_search(seat)``.
"""

from knowledge.searcher import (
    PageHit,
    SearchResult,
    SearchUnavailable,
    get_searcher,
    reset_searcher,
    search,
    search_knowledge_answer,
)

__all__ = [
    "PageHit",
    "SearchResult",
    "SearchUnavailable",
    "get_searcher",
    "reset_searcher",
    "search",
    "search_knowledge_answer",
]
