"""Counterparty profiles: one block per distinct sender of the trigger with a stored profile.

Not gated: a keyed read of what this seat (the observer, always) has learned about each sender.
"""

from __future__ import annotations

import logging

from django.db import DatabaseError

from crewlet.models import Seat
from learning.intake.record import Sender
from learning.models import CounterpartyProfile
from learning.prefetch.blocks import BlockResult, done
from learning.prefetch.turn_state import PrefetchContext

log = logging.getLogger("learning.prefetch")

NAME = "counterparty_profiles"


# what a profile block reads of a profile
PROFILE_FIELDS = ("id", "subject_handle", "subject_external_id", "display_name",
                  "communication_style", "past_decisions", "sensitivities", "topics")


def profile_for(seat: Seat, sender: Sender) -> CounterpartyProfile | None:
    """The seat's profile of this sender on the turn's own platform only.

    A handle names a person only within its platform: ``carol`` on Slack is not ``carol`` on
    Mattermost, so another platform's profile is never shown in its place.
    """
    if sender.handle:
        subject = {"subject_handle": sender.handle}
    elif sender.external_id:
        subject = {"subject_external_id": sender.external_id}
    else:
        return None
    return (CounterpartyProfile.objects.filter(observer=seat, subject_platform=sender.platform, **subject)
            .only(*PROFILE_FIELDS).order_by("id").first())


def _items(values) -> str:
    if isinstance(values, list):
        return "; ".join(" ".join(str(v).split()) for v in values if str(v).strip())
    return " ".join(str(values or "").split())


def render_profile(profile: CounterpartyProfile, sender: Sender) -> str:
    name = profile.display_name or sender.who or profile.subject_handle or profile.subject_external_id
    lines = [f"## Counterparty: {name}"]
    for label, value in (
        ("Communication style", profile.communication_style),
        ("Past decisions", profile.past_decisions),
        ("Sensitivities", profile.sensitivities),
        ("Topics of interest", profile.topics),
    ):
        text = _items(value)
        if text:
            lines.append(f"{label}: {text}")
    return "\n".join(lines)


def start(ctx: PrefetchContext):
    blocks = []
    try:
        for sender in ctx.request.senders(exclude_handle=ctx.seat.handle):
            profile = profile_for(ctx.seat, sender)
            if profile is not None:
                blocks.append(render_profile(profile, sender))
    except DatabaseError:
        log.warning("profiles unreadable for %s", ctx.seat.handle, exc_info=True)
        return done(BlockResult(NAME, selection_count=0))
    return done(BlockResult(NAME, "\n\n".join(blocks), selection_count=len(blocks)))
