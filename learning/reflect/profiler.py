"""Profiler: one observation pass per distinct human sender of the trigger; never the seat itself.

An agent-to-agent ask, a schedule's fire or a sandbox completion carries no human's message, so
nothing is profiled from them. A coalesced trigger is grouped by sender first (a thread where one
human sent four messages is one counterparty). Runs on unsettled turns too: what a person said
is true of them whether or not the work is finished. Each sender is isolated: one sender's failed
auxiliary call or write is logged and reported under ``failed``, and the later senders are still observed.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.db.models import F

from core import aux, events
from core.event_types import CounterpartyProfileUpdated
from learning.models import CounterpartyProfile
from learning.purposes import profile_update

log = logging.getLogger("learning.reflect")

NAME = "profiler"
MAX_ITEMS = 20  # per list: the oldest observations give way, a profile is not a transcript


def wired(learning) -> bool:
    return learning.enabled


def subjects_of(ctx) -> list[tuple]:
    """Distinct human senders other than the seat, in order of first message, each with their messages."""
    grouped: dict[tuple, tuple] = {}
    for interaction in ctx.interactions:
        sender = interaction.sender
        if sender.kind != "human" or (sender.handle and sender.handle == ctx.seat.handle):
            continue
        _, messages = grouped.setdefault(sender.key, (sender, []))
        messages.append(interaction.body)
    return list(grouped.values())


def applies(ctx) -> str | None:
    if ctx.internal_trigger:
        return "internal_trigger"
    if not subjects_of(ctx):
        return "no_human_senders"
    if not aux.available(ctx.seat):
        return "no_auxiliary_model"
    return None


def _merge(old: list, new: list) -> list:
    merged = list(old or [])
    for item in new:
        if item not in merged:
            merged.append(item)
    return merged[-MAX_ITEMS:]


def observe(ctx, sender, messages: list[str]) -> CounterpartyProfile:
    key = {"observer": ctx.seat, "subject_handle": sender.handle, "subject_external_id": sender.external_id,
           "subject_platform": sender.platform}
    existing = CounterpartyProfile.objects.filter(**key).first()
    answer = aux.call(
        seat=ctx.seat,
        stage="reflection",
        purpose=profile_update.NAME,
        turn_id=ctx.run_id,
        inputs={
            "seat": ctx.seat.handle,
            "subject": sender.name,
            "platform": sender.platform,
            "woken_by": ctx.label,
            "messages": messages,
            "existing": {
                "communication_style": existing.communication_style if existing else "",
                **{f: getattr(existing, f) if existing else [] for f in profile_update.FIELDS},
            },
        },
    ).value
    with transaction.atomic():
        profile, _ = CounterpartyProfile.objects.select_for_update().get_or_create(**key)
        profile.display_name = sender.display_name or profile.display_name
        profile.communication_style = answer["communication_style"] or profile.communication_style
        for field in profile_update.FIELDS:
            setattr(profile, field, _merge(getattr(profile, field), answer[field]))
        profile.observations = F("observations") + 1
        profile.save()
        profile.refresh_from_db()
    return profile


def run(ctx) -> dict:
    updated, failed = [], {}
    for sender, messages in subjects_of(ctx):
        subject = sender.handle or sender.external_id
        try:
            profile = observe(ctx, sender, messages)
        except Exception as exc:  # isolation: one sender's failure costs none of the others
            log.exception("profiler failed for sender %s on turn %s", subject, ctx.run_id)
            failed[subject] = f"{type(exc).__name__}: {exc}"
            continue
        events.publish(
            CounterpartyProfileUpdated(
                profile_id=profile.pk,
                subject_handle=profile.subject_handle,
                subject_external_id=profile.subject_external_id,
                subject_platform=profile.subject_platform,
                observations=profile.observations,
            ),
            seat=ctx.seat,
            turn_id=ctx.run_id,
        )
        updated.append(subject)
    if failed and not updated:  # nobody observed: the worker failed, as the pass record should say
        raise RuntimeError("; ".join(f"{subject}: {error}" for subject, error in failed.items()))
    return {"subjects": updated, **({"failed": failed} if failed else {})}
