"""Profiler: one observation pass per distinct human sender of the trigger; never the seat itself.

An agent-to-agent ask, a schedule's fire or a sandbox completion carries no human's message, so
nothing is profiled from them. A coalesced trigger is grouped by sender first (a thread where one
human sent four messages is one counterparty). Runs on unsettled turns too: what a person said
is true of them whether or not the work is finished. Each sender is isolated: one sender's failed
auxiliary call or write is logged and reported under ``failed``, and the later senders are still observed.
An observation counts only when it changed the profile: an answer that adds nothing new writes
nothing and is reported under ``unchanged``. The outcome names who answered (``answered_by``).
"""

from __future__ import annotations

import copy
import logging

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from core import auxiliary, events
from core.scrub import scrub_json
from crewlet.config.schema import Learning
from learning.events import CounterpartyProfileUpdated
from learning.models import CounterpartyProfile
from learning.purposes import profile_update
from learning.reflection.turn_context import TurnContext
from learning.reflection.worker import Answered, Prepared

log = logging.getLogger("learning.reflection")

MAX_ITEMS = 20  # per list: the oldest observations give way, a profile is not a transcript


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


def _merge(old: list, new: list) -> list:
    merged = list(old or [])
    for item in new:
        if item not in merged:
            merged.append(item)
    return merged[-MAX_ITEMS:]


MERGED = ("display_name", "communication_style", *profile_update.FIELDS, "observations")


def _key(ctx, sender) -> dict:
    return {"observer": ctx.seat, "subject_handle": sender.handle, "subject_external_id": sender.external_id,
            "subject_platform": sender.platform}


def _known(ctx, subjects) -> dict[tuple, CounterpartyProfile]:
    """The profiles the seat already keeps of these senders: ONE read for the whole pass."""
    if not subjects:
        return {}
    match = Q()
    for sender, _ in subjects:
        handle, external_id, platform = sender.key
        match |= Q(subject_handle=handle, subject_external_id=external_id, subject_platform=platform)
    profiles = CounterpartyProfile.objects.filter(observer=ctx.seat).filter(match)
    return {(p.subject_handle, p.subject_external_id, p.subject_platform): p for p in profiles}


def ask(ctx, sender, messages: list[str], existing: CounterpartyProfile | None) -> profile_update.Answer:
    """What these messages add to the profile (the model call; no writes)."""
    return ctx.consult(profile_update.NAME, profile_update.Inputs(
        seat=ctx.seat.handle,
        subject=sender.name,
        platform=sender.platform,
        woken_by=ctx.label,
        messages=messages,
        existing={
            "communication_style": existing.communication_style if existing else "",
            **{f: getattr(existing, f) if existing else [] for f in profile_update.FIELDS},
        },
    ))


def _merged(profile: CounterpartyProfile, sender, answer: profile_update.Answer) -> bool:
    """Merge the answer in; an observation is counted (and True returned) only when it changed something."""
    before = [getattr(profile, f) for f in ("communication_style", *profile_update.FIELDS)]
    profile.display_name = sender.display_name or profile.display_name
    profile.communication_style = answer.communication_style or profile.communication_style
    for field in profile_update.FIELDS:
        setattr(profile, field, _merge(getattr(profile, field), getattr(answer, field)))
    changed = before != [getattr(profile, f) for f in ("communication_style", *profile_update.FIELDS)]
    if changed:
        profile.observations = (profile.observations or 0) + 1
    return changed


def write(ctx, sender, answer: profile_update.Answer,
          existing: CounterpartyProfile | None) -> CounterpartyProfile | None:
    """Merge the answer into the profile. The profile read before the model call is written back by
    one conditional UPDATE (or one INSERT for a new person); a row that moved meanwhile is merged again
    under a row lock. None: the answer changed nothing, and nothing is written."""
    # the one scrubber (core.scrub): a model's answer may carry a secret
    answer = answer.model_copy(update=scrub_json(answer.model_dump()))
    if existing is not None:
        merged = copy.copy(existing)  # the row as read stays as read: a retried write merges it again
        if not _merged(merged, sender, answer):
            return None
        as_read = CounterpartyProfile.objects.filter(pk=existing.pk, observations=existing.observations)
        if as_read.update(**{f: getattr(merged, f) for f in MERGED}, updated_at=timezone.now()):
            return merged
    else:
        profile = CounterpartyProfile(**_key(ctx, sender))
        if not _merged(profile, sender, answer):
            return None
        try:
            with transaction.atomic():
                profile.save(force_insert=True)
            return profile
        except IntegrityError:
            pass  # created meanwhile: merge into that row
    profile, _ = CounterpartyProfile.objects.select_for_update().get_or_create(**_key(ctx, sender))
    if not _merged(profile, sender, answer) and profile.observations:
        return None
    profile.save()
    return profile


def _announce(ctx, profile: CounterpartyProfile) -> None:
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


class Observed(Answered):
    """The senders whose profiles changed, those whose did not, and those whose write failed."""

    subjects: list[str]
    unchanged: list[str] = []
    failed: dict[str, str] = {}


class Profiler:
    """The Profiler: one observation per human sender of the turn."""

    name = "profiler"

    def wired(self, learning: Learning) -> bool:
        return learning.enabled

    def applies(self, ctx: TurnContext) -> str | None:
        if ctx.internal_trigger:
            return "internal_trigger"
        if not subjects_of(ctx):
            return "no_human_senders"
        if not auxiliary.available(ctx.seat):
            return "no_auxiliary_model"
        return None

    def run(self, ctx: TurnContext) -> Prepared:
        """Each sender's model call (no writes); returns the write that merges every answer."""
        subjects = subjects_of(ctx)
        known = _known(ctx, subjects)
        answers, failed = [], {}
        for sender, messages in subjects:
            subject = sender.handle or sender.external_id
            existing = known.get((sender.handle, sender.external_id, sender.platform))
            try:
                answers.append((subject, sender, ask(ctx, sender, messages, existing), existing))
            except Exception as exc:  # isolation: one sender's failure costs none of the others
                log.exception("profiler failed for sender %s on turn %s", subject, ctx.run_id)
                failed[subject] = f"{type(exc).__name__}: {exc}"
        if failed and not answers:  # nobody observed: the worker failed, as the pass record should say
            raise RuntimeError("; ".join(f"{subject}: {error}" for subject, error in failed.items()))

        answered = (ctx.notes.get("answered_by") or {}).get(profile_update.NAME) or {}

        def write_all() -> Observed:
            updated, unchanged = [], []

            def write_one(subject, sender, answer, existing) -> None:
                profile = write(ctx, sender, answer, existing)
                if profile is None:
                    unchanged.append(subject)
                    return
                _announce(ctx, profile)
                updated.append(subject)

            for subject, sender, answer, existing in answers:
                if len(answers) == 1:  # the worker's own savepoint isolates a lone sender
                    write_one(subject, sender, answer, existing)
                    continue
                try:
                    with transaction.atomic(), events.batched():
                        write_one(subject, sender, answer, existing)
                except Exception as exc:
                    log.exception("profiler failed writing sender %s on turn %s", subject, ctx.run_id)
                    failed[subject] = f"{type(exc).__name__}: {exc}"
            if failed and not updated and not unchanged:
                raise RuntimeError("; ".join(f"{subject}: {error}" for subject, error in failed.items()))
            return Observed(subjects=updated, **({"unchanged": unchanged} if unchanged else {}),
                            **({"failed": failed} if failed else {}), **answered)

        return write_all
