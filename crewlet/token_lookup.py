"""The token check's one read: a live token by its sha256 hash, with its company, its seat and the
seat's role and unit, in ONE indexed SELECT (the hash is unique: no ORDER BY, no LIMIT).

Every API request makes this read, so it is not compiled per request: the statement is built once
per database connection's vendor from the models' own columns, and the rows are made into model
instances as the ORM makes them (``Model.from_db``, each column through its field's and the
backend's converters), the related instances cached on the token as ``select_related`` caches them.

PostgreSQL would also plan the five-table join on every call, and planning it costs several times
running it; so outside a transaction the statement is PREPAREd once per session and EXECUTEd after
(a session that lost it -- a pooler's, after ``DISCARD ALL`` -- prepares it again). Inside a
transaction the plain statement runs: a failed EXECUTE there would abort the caller's transaction.
"""

from __future__ import annotations

import weakref
from datetime import datetime

from django.db import DatabaseError, connections
from django.db.models import Model

from crewlet.models import ApiToken, Company, Role, Seat, Unit

# (alias, model, join): the token, then what it loads with it; a LEFT join may find no row
GRAPH = (
    ("t", ApiToken, ""),
    ("c", Company, "JOIN {c} c ON c.{pk} = t.{company}"),
    ("s", Seat, "LEFT JOIN {s} s ON s.{pk} = t.{seat}"),
    ("r", Role, "LEFT JOIN {r} r ON r.{pk} = s.{role}"),
    ("u", Unit, "LEFT JOIN {u} u ON u.{pk} = s.{unit}"),
)

# one plan per connection wrapper (each thread has its own): the converters are bound to its backend
_plans: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

PREPARED = "crewlet_live_token"  # the PostgreSQL prepared statement's name
_prepared_sessions: weakref.WeakSet = weakref.WeakSet()  # DB-API connections that have prepared it
DUPLICATE_PREPARED_STATEMENT, INVALID_STATEMENT_NAME = "42P05", "26000"  # SQLSTATEs


class _Plan:
    """The statement and, per model, its slice of the row, its field names and its converters."""

    def __init__(self, connection):
        qn = connection.ops.quote_name
        names = {
            "c": qn(Company._meta.db_table), "s": qn(Seat._meta.db_table), "r": qn(Role._meta.db_table),
            "u": qn(Unit._meta.db_table), "pk": qn("id"),
            "company": qn(ApiToken._meta.get_field("company").column), "seat": qn(ApiToken._meta.get_field("seat").column),
            "role": qn(Seat._meta.get_field("role").column), "unit": qn(Seat._meta.get_field("unit").column),
        }
        columns, joins, self.parts = [], [], []
        for alias, model, join in GRAPH:
            fields = list(model._meta.concrete_fields)
            start = len(columns)
            columns += [f"{alias}.{qn(f.column)}" for f in fields]
            converters = []
            for f in fields:
                col = f.get_col(alias)
                found = connection.ops.get_db_converters(col) + col.get_db_converters(connection)
                converters.append((found, col))
            self.parts.append((alias, model, [f.attname for f in fields], start, len(columns), converters))
            if join:
                joins.append(join.format(**names))
        t = qn(ApiToken._meta.db_table)
        field = ApiToken._meta.get_field
        head = f"SELECT {', '.join(columns)} FROM {t} t {' '.join(joins)}"

        def where(hash_, revoked, now):
            expires = f"t.{qn(field('expires_at').column)}"
            return (f" WHERE t.{qn(field('token_hash').column)} = {hash_} AND t.{qn(field('revoked').column)} = {revoked}"
                    f" AND ({expires} IS NULL OR {expires} > {now})")

        self.sql = head + where("%s", "%s", "%s")
        self.prepare = self.execute = None
        if connection.vendor == "postgresql":
            types = ", ".join(field(name).db_type(connection) for name in ("token_hash", "revoked", "expires_at"))
            self.prepare = f"PREPARE {PREPARED} ({types}) AS {head}{where('$1', '$2', '$3')}"
            self.execute = f"EXECUTE {PREPARED}(%s, %s, %s)"

    def instances(self, row, connection) -> dict[str, Model | None]:
        out: dict[str, Model | None] = {}
        for alias, model, attnames, start, end, converters in self.parts:
            values = list(row[start:end])
            for i, (found, col) in enumerate(converters):
                for convert in found:
                    values[i] = convert(values[i], col, connection)
            out[alias] = None if values[0] is None else model.from_db(connection.alias, attnames, values)
        return out


def live_token(token_hash: str, now: datetime, *, using: str = "default") -> ApiToken | None:
    """The token with this hash, not revoked and not expired at ``now``, its graph loaded; else None."""
    connection = connections[using]
    plan = _plans.get(connection)
    if plan is None:
        plan = _plans[connection] = _Plan(connection)
    expires = ApiToken._meta.get_field("expires_at").get_db_prep_value(now, connection)
    row = _fetch(connection, plan, [token_hash, False, expires])
    if row is None:
        return None
    found = plan.instances(row, connection)
    token, seat = found["t"], found["s"]
    assert isinstance(token, ApiToken)  # the token's own row always matched
    # cached as select_related caches them: no query, no router check
    ApiToken._meta.get_field("company").set_cached_value(token, found["c"])
    ApiToken._meta.get_field("seat").set_cached_value(token, seat)
    if seat is not None:
        Seat._meta.get_field("role").set_cached_value(seat, found["r"])
        Seat._meta.get_field("unit").set_cached_value(seat, found["u"])
    return token


def _fetch(connection, plan: _Plan, params: list):
    with connection.cursor() as cursor:
        if plan.execute is None or not connection.get_autocommit():
            cursor.execute(plan.sql, params)
            return cursor.fetchone()
        session = connection.connection
        if session not in _prepared_sessions:
            _prepare(cursor, plan, session)
        try:
            cursor.execute(plan.execute, params)
        except DatabaseError as exc:
            if _sqlstate(exc) != INVALID_STATEMENT_NAME:
                raise
            _prepared_sessions.discard(session)  # the session lost it: prepared again, once
            _prepare(cursor, plan, session)
            cursor.execute(plan.execute, params)
        return cursor.fetchone()


def _prepare(cursor, plan: _Plan, session) -> None:
    try:
        cursor.execute(plan.prepare)
    except DatabaseError as exc:
        if _sqlstate(exc) != DUPLICATE_PREPARED_STATEMENT:  # already there (prepared before we looked)
            raise
    _prepared_sessions.add(session)


def _sqlstate(exc: DatabaseError) -> str | None:
    return getattr(exc.__cause__, "sqlstate", None)
