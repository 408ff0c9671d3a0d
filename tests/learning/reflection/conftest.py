"""Fixtures for the reflection loop: stored turns, a clean duplicate ring, a scripted auxiliary model."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest
from django.utils import timezone

from learning.intake import turns
from learning.intake.record import TurnRecord
from learning.models import Turn
from learning.reflection.ring import RING

_runs = itertools.count(1)


def record(seat, **overrides) -> dict:
    """A realistic settled chat turn in which a human stated a preference."""
    n = next(_runs)
    started = timezone.now() - timedelta(minutes=5)
    base = {
        "run_id": f"run-{n}",
        "work_key": f"chat:msg-{n}",
        "seat": seat.handle,
        "conversation_id": "chat:C1:thread-1",
        "conversation_kind": "chat",
        "label": "Message from Maya: Slack message",
        "subject_is_label": True,
        "ask": "",
        "plan_summary": "Replied in the thread with a short status summary.",
        "tool_sequence": ["mattermost_post_message"],
        "tools_called": ["mattermost_post_message"],
        "review_outcome": "done",
        "failure_set_by": None,
        "failure_reason": "",
        "skills_offered": [],
        "interactions": [
            {
                "sender": {"handle": "maya", "external_id": "", "platform": "mattermost", "display_name": "Maya", "kind": "human"},
                "body": "Thanks! I prefer short bullet-point status updates.",
                "at": None,
            }
        ],
        "self_persisted": False,
        "worker_completed": False,
        "work_item": "",
        "schedule": "",
        "started_at": started.isoformat(),
        "ended_at": (started + timedelta(minutes=2)).isoformat(),
        "duration_ms": None,
    }
    base.update(overrides)
    return base


def human(body: str, handle: str = "maya", name: str = "Maya", platform: str = "mattermost", kind: str = "human") -> dict:
    return {
        "sender": {"handle": handle, "external_id": "", "platform": platform, "display_name": name, "kind": kind},
        "body": body,
        "at": None,
    }


def store(seat, **overrides) -> Turn:
    """Stored through the production intake (``turns.store_turn``), as ``POST /turns`` stores it."""
    turn, _ = turns.store_turn(seat=seat, record=TurnRecord.model_validate(record(seat, **overrides)))
    return turn


@pytest.fixture(autouse=True)
def _clean_ring():
    RING.clear()
    yield
    RING.clear()


@pytest.fixture
def make_turn(seat):
    def _make(target=None, **overrides):
        return store(target or seat, **overrides)

    return _make


@pytest.fixture
def ctx_of():
    from learning.reflection.turn_context import TurnContext

    def _ctx(turn, now=None):
        turn.refresh_from_db()
        return TurnContext.of(turn, now=now)

    return _ctx


@pytest.fixture
def scripted(seat):
    """Route the seat's auxiliary calls to the scripted provider (unqueued purposes answer offline)."""
    from core.providers.llm.scripted import ScriptedProvider

    seat.role.llm_auxiliary = ["scripted"]
    seat.role.save(update_fields=["llm_auxiliary"])
    return ScriptedProvider


def lose_its_task(make_turn, target=None):
    """A stored turn whose task a worker took from the queue and died with: the sweep alone can save it."""
    from django_q.models import OrmQ

    turn = make_turn(target)
    OrmQ.objects.filter(pk__in=[q.pk for q in OrmQ.objects.all() if q.task["args"] == (turn.pk,)]).delete()
    return turn
