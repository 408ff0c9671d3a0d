"""## First-turn onboarding: rendered until the seat calls ``mark_onboarded``.

The marker is stamped with a hash of the seat's unit chain; a change in the chain invalidates it,
so the hint fires again for the new structure.
"""

from __future__ import annotations

import hashlib
import logging

from django.db import DatabaseError
from django.db.models import Q
from django.utils import timezone

from crewlet.models import Seat
from knowledge.models import Page
from learning.models import OnboardingMarker
from learning.prefetch.blocks import BlockResult, done
from learning.prefetch.turn_state import PrefetchContext

log = logging.getLogger("learning.prefetch")

NAME = "first_turn_onboarding"
HEADING = "## First-turn onboarding"
ONBOARDING_PAGES = 10  # ours: how many onboarding pages the block lists


def chain(seat: Seat) -> list:
    return seat.unit.chain() if seat.unit_id and seat.unit else []


def chain_hash(seat: Seat) -> str:
    """What the marker is stamped with: the unit chain (nearest first) and each unit's container."""
    parts = [f"{u.pk}:{u.key}:{u.knowledge_container}" for u in chain(seat)]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()


def onboarded_at(seat: Seat):
    """When the seat onboarded for its CURRENT unit chain, or None."""
    marker = OnboardingMarker.objects.filter(seat=seat).order_by("pk").values_list("chain_hash", "onboarded_at").first()
    if marker is None or marker[0] != chain_hash(seat):
        return None
    return marker[1]


def mark_onboarded(*, seat: Seat, now=None) -> OnboardingMarker:
    marker, _ = OnboardingMarker.objects.update_or_create(
        seat=seat, defaults={"chain_hash": chain_hash(seat), "onboarded_at": now or timezone.now()}
    )
    return marker


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
