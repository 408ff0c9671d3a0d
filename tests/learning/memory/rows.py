"""Helpers that create memory rows directly, as the reflection workers would have written them."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from core.providers.embeddings import embed_one
from learning.intake import turns
from learning.intake.record import Interaction, Sender, TurnRecord
from learning.memory import episodes
from learning.models import DiaryEntry, Episode, SynthesizedSkill


def note(seat, content, *, days_ago=0, kind=DiaryEntry.LONG, ttl_days=None, embed=True):
    now = timezone.now() - timedelta(days=days_ago)
    entry = DiaryEntry(seat=seat, kind=kind, content=content, created_at=now,
                       ttl_until=(timezone.now() + timedelta(days=ttl_days)) if ttl_days else None)
    if embed:
        result = embed_one(content)
        entry.set_vector(result.vector, result.model)
    entry.save()
    return entry


def episode(seat, *, label="Message from Ana: Slack message", ask="", did="", tools=(), outcome="done",
            days_ago=1, run_id="", conversation_id="", kind=Episode.RAW, embed=True, **extra):
    when = timezone.now() - timedelta(days=days_ago)
    row = Episode(seat=seat, kind=kind, task_summary=label, ask=ask, plan_summary=did, tool_sequence=list(tools),
                  review_outcome=outcome, started_at=when - timedelta(minutes=5), ended_at=when, run_id=run_id,
                  conversation_id=conversation_id, **extra)
    if embed and kind == Episode.RAW:
        result = embed_one(episodes.embed_text(label=label, ask=ask, what_it_did=did))
        row.set_vector(result.vector, result.model)
    row.save()
    return row


def said(body, *, handle="carol", name="", platform="", kind="human") -> Interaction:
    """One inbound message, in the one ``Interaction`` shape the prefetch and the turn record share."""
    return Interaction(sender=Sender(handle=handle, display_name=name, platform=platform, kind=kind), body=body)


def stored_turn(seat, *, run_id, conversation_id="", outcome="done", conversation_kind="chat", **fields):
    """A turn stored through the production intake (``turns.store_turn``), as ``POST /turns`` stores it."""
    record = TurnRecord(run_id=run_id, seat=seat.handle, conversation_id=conversation_id,
                        conversation_kind=conversation_kind, review_outcome=outcome, **fields)
    return turns.store_turn(seat=seat, record=record)[0]


def skill(seat, name, description="does a thing", *, state=SynthesizedSkill.ACTIVE, body=None, **extra):
    return SynthesizedSkill.objects.create(seat=seat, name=name, description=description,
                                           body=body or f"# {name}\n\n1. step", state=state,
                                           created_at=timezone.now(), **extra)
