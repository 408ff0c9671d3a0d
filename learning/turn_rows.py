"""The intake's two writes, each ONE statement however many turns a commit carries: the new turns (their
ids returned by the INSERT, on both engines), then their reflection tasks as django-q2's ORM broker rows;
and a reflection pass's last write, the turn marked reflected.
"""

from __future__ import annotations

from datetime import datetime

from django_q.models import OrmQ

from core.statements import Update
from learning.models import Turn


def insert_turns(turns: list[Turn], *, using: str = "default") -> list[Turn]:
    """The unsaved ``turns`` in one INSERT, each given its id; a run id the seat already stored fails
    the whole statement (``IntegrityError``)."""
    return Turn.objects.using(using).bulk_create(turns)


def insert_tasks(key: str, packages: list[str], lock: datetime, *, using: str = "default") -> None:
    """django-q2's signed task packages as rows of its ORM broker's queue, in one INSERT (what the
    broker's own ``enqueue`` writes one row at a time)."""
    OrmQ.objects.using(using).bulk_create([OrmQ(key=key, payload=p, lock=lock) for p in packages])


# one fixed statement: the ORM's UPDATE of one row by its id cost more CPU to compile than to run (core.statements)
_MARK = Update(Turn, ("reflected_at",), ("id",))


def mark_reflected(turn_id: int, at: datetime, *, using: str = "default") -> None:
    """``Turn.objects.filter(pk=turn_id).update(reflected_at=at)``, as one fixed statement."""
    _MARK.run((turn_id,), (at,), using=using)
