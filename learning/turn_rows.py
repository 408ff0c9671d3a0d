"""The intake's two writes, each ONE statement however many turns a commit carries: the new turns (their
ids returned), then their reflection tasks as django-q2's ORM broker rows.

They run on every accepted ``POST /turns``, so they are not compiled per request: the statement's
head is built once per database connection from the models' own columns, and each value goes
through its field's ``pre_save`` and ``get_db_prep_save`` as the ORM's own insert sends it
(``received_at`` stamped, the payload adapted to the backend's JSON).
"""

from __future__ import annotations

import weakref
from datetime import datetime

from django.db import connections
from django.db.models import Model
from django_q.models import OrmQ

from learning.models import Turn

# one statement head per (connection wrapper, model): each thread has its own wrapper
_heads: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

# the attributes a stored turn is found by among the rows one INSERT returns (unique together; the
# order RETURNING yields rows in is not promised)
TURN_KEY = ("seat_id", "run_id")


class _Head:
    def __init__(self, model: type[Model], connection, returning: tuple[str, ...]):
        qn = connection.ops.quote_name
        self.fields = [f for f in model._meta.concrete_fields if not f.primary_key]
        self.sql = (f"INSERT INTO {qn(model._meta.db_table)} ({', '.join(qn(f.column) for f in self.fields)}) VALUES ")
        self.row = "(" + ", ".join(["%s"] * len(self.fields)) + ")"
        columns = {f.attname: f.column for f in model._meta.concrete_fields}
        self.returning = (" RETURNING " + ", ".join(qn(columns[n]) for n in returning)) if returning else ""


def _head(model: type[Model], connection, returning: tuple[str, ...] = ()) -> _Head:
    per = _heads.setdefault(connection, {})
    head = per.get(model)
    if head is None:
        head = per[model] = _Head(model, connection, returning)
    return head


def _execute(model: type[Model], objs: list, returning: tuple[str, ...], using: str) -> list[tuple]:
    connection = connections[using]
    head = _head(model, connection, returning)
    params: list = []
    for obj in objs:
        params += [f.get_db_prep_save(f.pre_save(obj, True), connection) for f in head.fields]
    with connection.cursor() as cursor:
        cursor.execute(head.sql + ", ".join([head.row] * len(objs)) + head.returning, params)
        return cursor.fetchall() if returning else []


def insert_turns(turns: list[Turn], *, using: str = "default") -> list[Turn]:
    """The unsaved ``turns`` in one INSERT, each given its id (as ``save`` leaves an instance); a run id
    the seat already stored fails the whole statement (``IntegrityError``)."""
    rows = _execute(Turn, turns, ("id", *TURN_KEY), using)
    ids = {(seat_id, run_id): pk for pk, seat_id, run_id in rows}
    for turn in turns:
        turn.pk = ids[(turn.seat_id, turn.run_id)]
        turn._state.adding, turn._state.db = False, using
    return turns


def insert_tasks(key: str, packages: list[str], lock: datetime, *, using: str = "default") -> None:
    """django-q2's signed task packages as rows of its ORM broker's queue, in one INSERT (what the
    broker's own ``enqueue`` writes one row at a time)."""
    _execute(OrmQ, [OrmQ(key=key, payload=p, lock=lock) for p in packages], (), using)
