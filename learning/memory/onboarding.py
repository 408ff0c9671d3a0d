"""The seat's onboarding marker: when it onboarded for its unit chain as the chain is now.

The marker is stamped with a hash of the seat's unit chain; a change in the chain invalidates it, so
the prefetch's first-turn onboarding block (``learning.prefetch.onboarding``) shows again for the new
structure. ``mark_onboarded`` stamps it (the builtin of that name).
"""

from __future__ import annotations

import hashlib

from django.utils import timezone

from crewlet.models import Seat
from learning.models import OnboardingMarker


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
