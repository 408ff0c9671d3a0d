"""The leads' review of auto-drafted pages: publish (adopt) or reject (delete).

An auto-draft sits under its container's ``Auto-Drafted Skills`` parent, hidden from every
agent's search. Publishing moves it out of that parent (to the parent it was meant for when the
writer named one, else the container root), drops the ``[Auto-draft]`` title backstop, makes it
``published`` and embeds it, so it becomes an ordinary page the query-time search reaches.
Rejecting deletes it; the page keeps nothing of the rejection, but the promotion pass's own record
(``learning.PromotionDraft``) does: it drafts the cluster again only when the team still converges
and brings a skill that no rejected draft was made from.
"""

from __future__ import annotations

import logging

from django.db import transaction

from core import events
from core.event_types import AdminAction
from core.providers.embeddings import embed_one
from crewlet.errors import BadInput, Conflict, Forbidden
from knowledge.events import KnowledgeDraftPublished, KnowledgeDraftRejected
from knowledge.models import AUTO_DRAFT_PREFIX, AUTO_DRAFTED_PARENT, Page, PageVersion

log = logging.getLogger("knowledge.review")

PUBLISH_PERMISSION = "knowledge.publish_page"
PUBLISH_EMBED_BUDGET = 10.0  # seconds: a person is waiting on the button, not a turn
INTENDED_PARENT_KEY = "intended_parent_id"  # optional Page.source key a writer may set


def review_queue():
    """Drafts awaiting a decision (the drafts parent itself is a folder, not a draft to review)."""
    return Page.objects.filter(state=Page.DRAFT).exclude(title=AUTO_DRAFTED_PARENT)


def can_publish(user) -> bool:
    return bool(user and user.is_active and user.has_perm(PUBLISH_PERMISSION))


def published_title(title: str) -> str:
    """The title without the fail-closed ``[Auto-draft]`` backstop, which would hide it from search."""
    if title.startswith(AUTO_DRAFT_PREFIX):
        return title[len(AUTO_DRAFT_PREFIX) :].strip() or title
    return title


def readers(container_key: str) -> list[str]:
    """The handles of the active seats whose read scope holds ``container_key``: the agents whose
    ``search_knowledge`` (and turn-start knowledge block) can reach a page published there."""
    from crewlet.models import Seat
    from knowledge import searcher

    backend = searcher.get_searcher()
    return [seat.handle for seat in Seat.objects.filter(active=True).order_by("handle")
            if backend.can_search(seat) and container_key in searcher.accessible_containers(seat)]


def readers_sentence(container_key: str) -> str:
    """Who can find a page in ``container_key``, or, when nobody can, how to widen the read scope."""
    from knowledge import searcher

    handles = readers(container_key)
    if handles:
        return f"the agents of {', '.join(handles)} can now find it with search_knowledge"
    scope = ", ".join(searcher.accessible_containers()) or "nothing"
    return (f"no agent can find it yet: {container_key} is not in any seat's read scope (knowledge.scope reads "
            f"{scope}); add \"{container_key}\" to knowledge.scope in the company config to let agents read it")


def embedding_text(page: Page) -> str:
    return f"{page.title}\n\n{page.body}"


def _require_reviewer(user) -> str:
    if not can_publish(user):
        raise Forbidden(f"{getattr(user, 'username', 'anonymous')} lacks the {PUBLISH_PERMISSION} permission")
    return user.get_username()


def _require_draft(page: Page) -> None:
    if page.state != Page.DRAFT:
        raise Conflict(f"page {page.pk} is {page.state}, not a draft awaiting review")
    if page.title == AUTO_DRAFTED_PARENT:
        raise Conflict(f"page {page.pk} is the {AUTO_DRAFTED_PARENT!r} folder, not a draft")


def _is_drafts_folder_or_inside(page: Page | None) -> bool:
    seen = set()
    while page is not None and page.pk not in seen:
        if page.title == AUTO_DRAFTED_PARENT:
            return True
        seen.add(page.pk)
        page = page.parent
    return False


def intended_parent(page: Page) -> Page | None:
    """The parent the writer named in ``source`` if it still exists in the container, else the root."""
    wanted = (page.source or {}).get(INTENDED_PARENT_KEY)
    if not wanted:
        return None
    parent = Page.objects.filter(pk=wanted, container_key=page.container_key).first()
    if parent is None or parent.pk == page.pk or _is_drafts_folder_or_inside(parent):
        return None
    return parent


def _page_payload(page: Page, username: str) -> dict:
    source = page.source or {}
    return {
        "user": username,
        "page_id": page.pk,
        "page_title": page.title,
        "container_key": page.container_key,
        "skills": source.get("skills", []),
        "seats": source.get("seats", []),
    }


def _audit(action: str, payload: dict) -> None:
    detail = {k: v for k, v in payload.items() if k != "user"}
    events.publish(AdminAction(user=payload["user"], action=action, object=f"knowledge.page:{payload['page_id']}", detail=detail))


def _version(page: Page, author: str) -> PageVersion:
    last = page.versions.order_by("-number").values_list("number", flat=True).first() or 0
    return PageVersion.objects.create(page=page, number=last + 1, title=page.title, body=page.body, author=author)


def edit_draft(*, page: Page, user, title: str, body: str) -> Page:
    """A lead's edit before publishing: a new version naming them (the draft as written is kept as v1)."""
    username = _require_reviewer(user)
    title, body = " ".join((title or "").split()), (body or "").strip()
    if not title:
        raise BadInput("title: a draft needs a title")
    if not body:
        raise BadInput("body: a draft needs a body (reject it to remove it)")
    if not title.startswith(AUTO_DRAFT_PREFIX):
        title = f"{AUTO_DRAFT_PREFIX} {title}"  # the backstop stays until publishing drops it
    with transaction.atomic():
        locked = Page.objects.select_for_update().get(pk=page.pk)
        _require_draft(locked)
        if (locked.title, locked.body) == (title, body):
            raise BadInput("body: the edit changes nothing")
        if Page.objects.filter(container_key=locked.container_key, title=title).exclude(pk=locked.pk).exists():
            raise Conflict(f"title: container {locked.container_key} already has a page titled {title!r}")
        if not locked.versions.exists():
            _version(locked, locked.author or "promotion pass")
        locked.title, locked.body = title, body
        locked.save(update_fields=["title", "body", "updated_at"])
        version = _version(locked, username)
        _audit("edit_draft", {**_page_payload(locked, username), "version": version.number})
    return locked


def publish_draft(*, page: Page, user) -> Page:
    """Adopt a draft: move it out of the drafts parent, publish it, embed it; announce who did."""
    username = _require_reviewer(user)
    _require_draft(page)
    title = published_title(page.title)
    if Page.objects.filter(container_key=page.container_key, title=title).exclude(pk=page.pk).exists():
        raise Conflict(f"container {page.container_key} already has a page titled {title!r}")
    page.title = title
    vector = embed_one(embedding_text(page), budget=PUBLISH_EMBED_BUDGET)  # outside the lock: it may take seconds
    with transaction.atomic():
        locked = Page.objects.select_for_update().get(pk=page.pk)
        _require_draft(locked)
        locked.title = title
        locked.parent = intended_parent(locked)
        locked.state = Page.PUBLISHED
        locked.set_vector(vector.vector, vector.model)
        locked.save()
        payload = _page_payload(locked, username)
        events.publish(KnowledgeDraftPublished(**payload, parent_id=locked.parent_id, embedding=vector.status))
        _audit("publish_draft", payload)
    if vector.vector is None:
        log.warning("published page %s without a vector (%s); it is found by text until embedded", locked.pk, vector.status)
    return locked


def reject_draft(*, page: Page, user) -> None:
    """Delete a draft; the title is free again (the promotion pass decides whether to re-draft it)."""
    username = _require_reviewer(user)
    with transaction.atomic():
        locked = Page.objects.select_for_update().get(pk=page.pk)
        _require_draft(locked)
        payload = _page_payload(locked, username)
        locked.delete()
        events.publish(KnowledgeDraftRejected(**payload))
        _audit("reject_draft", payload)


def save_page(*, page: Page, user, created: bool) -> Page:
    """An editor's save of a page (not a draft decision): re-embedded when published, and recorded.

    Only the review path publishes: an editor's save never moves a page's state. A new page is
    published only when its editor holds ``knowledge.publish_page`` (a lead); anyone else's waits in
    the review queue as a draft, for ``publish_draft``. Changing a page already published is
    publishing what agents will read, so it too needs ``knowledge.publish_page``.
    """
    if created:
        page.state = Page.PUBLISHED if can_publish(user) else Page.DRAFT
    else:
        page.state = Page.objects.values_list("state", flat=True).get(pk=page.pk)
        if page.state == Page.PUBLISHED and not can_publish(user):
            raise Forbidden(f"{getattr(user, 'username', 'anonymous')} lacks the {PUBLISH_PERMISSION} permission: "
                            f"page {page.pk} is published, and only a lead changes what agents read")
    if page.state == Page.PUBLISHED:
        vector = embed_one(embedding_text(page), budget=PUBLISH_EMBED_BUDGET)
        page.set_vector(vector.vector, vector.model)
    with transaction.atomic():
        page.save()
        _audit("add_page" if created else "change_page", _page_payload(page, user.get_username()))
    return page


def delete_pages(*, pages, user) -> int:
    """An editor's delete of pages (drafts go through ``reject_draft``); each recorded."""
    username, done = user.get_username(), 0
    for page in pages:
        if Page.objects.filter(parent=page, state=Page.DRAFT).exists():
            raise Conflict(f"page {page.pk} ({page.title!r}) holds drafts awaiting review; publish or reject them first")
    with transaction.atomic():
        for page in pages:
            payload = _page_payload(page, username)
            page.delete()
            _audit("delete_page", payload)
            done += 1
    return done
