"""The token check's one read: a live token by its sha256 hash, with its company, its seat and the
seat's role and unit, in ONE indexed SELECT (the hash is unique: no ORDER BY, no LIMIT).

Every API request makes this read, so it is not compiled per request: the statement is built once
per database connection's vendor from the models' own columns, and the rows are made into model
instances as the ORM makes them (``Model.from_db``, each column through its field's and the
backend's converters), the related instances cached on the token as ``select_related`` caches them.
On PostgreSQL the connection prepares it after its second run (``CREWLET_PG_PREPARE_THRESHOLD``), so
the five-table join, whose planning costs several times its running, is planned once a connection.
"""

from __future__ import annotations

import weakref
from datetime import datetime

from django.db import connections
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
        self.sql = (
            f"SELECT {', '.join(columns)} FROM {t} t {' '.join(joins)}"
            f" WHERE t.{qn(field('token_hash').column)} = %s AND t.{qn(field('revoked').column)} = %s"
            f" AND (t.{qn(field('expires_at').column)} IS NULL OR t.{qn(field('expires_at').column)} > %s)"
        )

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
    with connection.cursor() as cursor:
        cursor.execute(plan.sql, [token_hash, False, expires])
        row = cursor.fetchone()
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
