"""Native pages: the one write path (which embeds), and the rule for what counts as an auto-draft.

A page is embedded whole (title and body, split between words and pooled when long) in the same
write that stores it; a page whose vector cannot be had in time is stored without one and is still
found by the text half of the search. Content is stored verbatim: over a limit is refused.
"""

from __future__ import annotations

import logging

from django.db import transaction

from core.providers.embeddings import embed_one
from crewlet.errors import BadInput
from knowledge.models import AUTO_DRAFT_PREFIX, AUTO_DRAFTED_PARENT, Page

log = logging.getLogger("knowledge.pages")

MAX_PAGE_TITLE_CHARS = 255  # Confluence's own title limit, kept for the native backend so both refuse alike
MAX_PAGE_BODY_CHARS = 200_000
PAGE_EMBED_BUDGET = 10.0  # seconds: a page save is an operator or background write, not a turn
MAX_PARENT_DEPTH = 50  # a parent chain longer than this is treated as a loop


def check_page(*, title: str, body: str) -> None:
    """Refuse a page over its limits, naming the limit; nothing is truncated."""
    if not title.strip():
        raise BadInput("a page needs a title")
    if len(title) > MAX_PAGE_TITLE_CHARS:
        raise BadInput(f"page title is {len(title)} characters; the limit is {MAX_PAGE_TITLE_CHARS}")
    if len(body) > MAX_PAGE_BODY_CHARS:
        raise BadInput(f"page body is {len(body)} characters; the limit is {MAX_PAGE_BODY_CHARS}")


def embed_text(*, title: str, body: str) -> str:
    return f"{title}\n\n{body}".strip()


def _apply_vector(page: Page) -> None:
    result = embed_one(embed_text(title=page.title, body=page.body), budget=PAGE_EMBED_BUDGET)
    page.set_vector(result.vector, result.model)
    if result.vector is None and result.status != "unconfigured":
        log.warning("page %r stored without a vector (%s)", page.title, result.status)


def save_page(
    *,
    container_key: str,
    title: str,
    body: str = "",
    parent: Page | None = None,
    state: str = Page.PUBLISHED,
    author: str = "",
    labels: list | None = None,
    source: dict | None = None,
) -> Page:
    """Create a page, embedded in the same write; refuses over the title and body limits."""
    check_page(title=title, body=body)
    page = Page(
        container_key=container_key,
        title=title,
        body=body,
        parent=parent,
        state=state,
        author=author,
        labels=list(labels or []),
        source=dict(source or {}),
    )
    _apply_vector(page)
    with transaction.atomic():
        page.save()
    return page


def update_page(*, page: Page, **fields) -> Page:
    """Change a page's fields; a changed title or body is re-embedded in the same write."""
    title, body = fields.get("title", page.title), fields.get("body", page.body)
    check_page(title=title, body=body)
    reembed = title != page.title or body != page.body
    for name, value in fields.items():
        setattr(page, name, value)
    if reembed:
        _apply_vector(page)
    with transaction.atomic():
        page.save()
    return page


def is_auto_draft_title(title: str) -> bool:
    return title.startswith(AUTO_DRAFT_PREFIX)


def under_auto_drafted_parent(page: Page) -> bool:
    """Whether any ancestor of ``page`` is an Auto-Drafted Skills parent (a loop counts as yes)."""
    seen: set[int] = set()
    node = page.parent
    while node is not None:
        if node.title == AUTO_DRAFTED_PARENT or node.pk in seen or len(seen) >= MAX_PARENT_DEPTH:
            return True
        seen.add(node.pk)
        node = node.parent
    return False


def is_auto_draft(page: Page) -> bool:
    """Unvetted: a draft, the drafts parent itself, anything beneath it, or an [Auto-draft] title."""
    return (
        page.state == Page.DRAFT
        or page.title == AUTO_DRAFTED_PARENT
        or is_auto_draft_title(page.title)
        or under_auto_drafted_parent(page)
    )
