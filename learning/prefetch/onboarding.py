"""## First-turn onboarding: rendered until the seat calls ``mark_onboarded``.

The seat's marker (``learning.memory.onboarding``) is stamped with a hash of its unit chain; a change
in the chain invalidates it, so the hint fires again for the new structure.
"""

from __future__ import annotations

import logging

from django.db import DatabaseError
from django.db.models import Q

from crewlet.models import Seat
from knowledge.models import Page
from learning.memory.onboarding import chain, onboarded_at
from learning.prefetch.blocks import BlockResult, done
from learning.prefetch.turn_state import PrefetchContext

log = logging.getLogger("learning.prefetch")

NAME = "first_turn_onboarding"
HEADING = "## First-turn onboarding"
ONBOARDING_PAGES = 10  # ours: how many onboarding pages the block lists


def onboarding_pages(seat: Seat) -> list[Page]:
    """The published onboarding pages of the seat's unit chain (named only: body and vector not read)."""
    containers = [u.knowledge_container for u in chain(seat) if u.knowledge_container]
    if not containers:
        return []
    pages = Page.objects.filter(container_key__in=containers, state=Page.PUBLISHED).filter(
        Q(title__icontains="onboarding") | Q(labels__icontains="onboarding"))
    return list(pages.only("id", "title", "container_key").order_by("container_key", "title")[:ONBOARDING_PAGES])


def start(ctx: PrefetchContext):
    try:
        if onboarded_at(ctx.seat) is not None:
            return done(BlockResult(NAME, selection_count=0))
        pages = onboarding_pages(ctx.seat)
    except DatabaseError:
        log.warning("onboarding state unreadable for %s", ctx.seat.handle, exc_info=True)
        return done(BlockResult(NAME, selection_count=0))
    containers = ", ".join(u.knowledge_container for u in chain(ctx.seat) if u.knowledge_container) or "none"
    if pages:
        lines = "\n".join(f"- {p.title} ({p.container_key})" for p in pages)
        body = (
            "You have not onboarded to your team as it is now structured. Read these onboarding pages from "
            f"your unit chain, then call mark_onboarded:\n{lines}"
        )
    else:
        body = (
            f"You have not onboarded to your team as it is now structured. No onboarding page is published on "
            f"your unit chain (containers: {containers}); call mark_onboarded once you have your bearings."
        )
    return done(BlockResult(NAME, f"{HEADING}\n{body}", selection_count=len(pages)))
