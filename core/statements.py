"""Hot-path reads compiled once: the ORM's own statement for a queryset, run again with new values
(and ``Insert``: the hot inserts' statement text written once).

A turn start makes several small keyed reads (its frozen prefix, the skill menu, the ledger, a
sender's profile, the onboarding marker and pages, the recalled episodes). Through the ORM each
cost 0.4-1.2 ms of main-thread CPU building and compiling its queryset and making model
instances, for 0.05-0.2 ms of running (SQLite, thread CPU time, medians of 300 calls: the skill
menu 1.2 ms, compiled 0.2 ms + 0.25 ms making its 50 skills; the frozen prefix 0.54 -> 0.16 ms).
``Compiled`` builds the queryset once per database connection with probe values, keeps the SQL
the compiler wrote, and afterwards binds the call's values in the probes' places and converts the
columns as the compiler would (the backend's and the fields' converters): the same statement and
the same values as the ORM's, without the ORM's per-call work. The queryset stays the one
definition of the read. On PostgreSQL the unchanging text is also what the connection prepares
after its second run (``CREWLET_PG_PREPARE_THRESHOLD``).

A probe must reach the statement as a parameter of its own (a plain comparison: ``seat=``,
``run_id=``, ``ttl_until__gt=``, ``pk__in=`` a tuple of probes), each exactly once, and be a value
no constant of the statement equals (a negative id, a string starting with NUL); a builder that
inlines one, drops one or binds one twice is refused when it is compiled.
"""

from __future__ import annotations

import datetime
import weakref
from collections.abc import Callable
from dataclasses import dataclass

from django.db import connections, transaction
from django.db.models import QuerySet


@dataclass(frozen=True)
class _Plan:
    sql: str
    slots: tuple  # per parameter: (probe index, None or the backend's wrapping type) or (None, the constant bound)
    converters: tuple  # (column index, (converter, ...), expression)


class Compiled:
    """``build(*probes)``: a ``values_list`` queryset; ``rows(*values)``: its rows for these values."""

    def __init__(self, build: Callable[..., QuerySet], *probes):
        self._build = build
        self._probes = probes
        self._plans: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # per connection (thread)

    def statement(self, *values, using: str = "default") -> tuple[str, list]:
        """The SQL and its parameters for these values (to run, or to embed as a subquery)."""
        connection = connections[using]
        plan = self._plan(connection, using)
        return plan.sql, self._params(plan, values, connection)

    def rows(self, *values, using: str = "default") -> list[tuple]:
        connection = connections[using]
        plan = self._plan(connection, using)
        with connection.cursor() as cursor:
            cursor.execute(plan.sql, self._params(plan, values, connection))
            rows = cursor.fetchall()
        return self._converted(plan, rows, connection)

    def converted(self, rows: list, using: str = "default") -> list[tuple]:
        """Rows of this statement run elsewhere (a batch of reads), converted as ``rows`` converts them."""
        connection = connections[using]
        return self._converted(self._plan(connection, using), rows, connection)

    def bound(self, *values, using: str = "default") -> Bound:
        """The read with these values, not run yet (run it by iterating, or hand it to a batch)."""
        return Bound(self, values, using)

    @staticmethod
    def _converted(plan: _Plan, rows: list, connection) -> list[tuple]:
        if not plan.converters:
            return rows
        out = []
        for row in rows:
            row = list(row)
            for index, functions, expression in plan.converters:
                for convert in functions:
                    row[index] = convert(row[index], expression, connection)
            out.append(tuple(row))
        return out

    @staticmethod
    def _bound(value, connection):
        """A value as the compiler binds it (a datetime adapted by the backend; others as they are)."""
        if isinstance(value, datetime.datetime):
            return connection.ops.adapt_datetimefield_value(value)
        return value

    def _params(self, plan: _Plan, values: tuple, connection) -> list:
        if len(values) != len(self._probes):
            raise TypeError(f"expected {len(self._probes)} values, got {len(values)}")
        return [(self._bound(values[i], connection) if wrap is None else wrap(values[i])) if i is not None else wrap
                for i, wrap in plan.slots]

    def _plan(self, connection, using: str) -> _Plan:
        plan = self._plans.get(connection)
        if plan is None:
            plan = self._plans[connection] = self._compile(connection, using)
        return plan

    def _compile(self, connection, using: str) -> _Plan:
        compiler = self._build(*self._probes).query.get_compiler(using=using)
        sql, params = compiler.as_sql()
        bound = [self._bound(probe, connection) for probe in self._probes]
        slots = []
        for param in params:
            # a probe as bound, or wrapped by the backend in a subclass of its type (PostgreSQL binds an integer
            # field's value as psycopg's Int4): the call's value is wrapped the same way
            found = [i for i, b in enumerate(bound) if isinstance(param, type(b)) and b == param]
            slots.append((found[0], None if type(param) is type(bound[found[0]]) else type(param)) if found
                         else (None, param))
        placed = sorted(i for i, _ in slots if i is not None)
        if placed != list(range(len(self._probes))):
            raise ValueError(f"every probe must be one parameter of the statement exactly once: {sql}")
        selected = [column for column, _sql, _alias in compiler.select]
        converters = tuple((index, tuple(functions), expression)
                           for index, (functions, expression) in compiler.get_converters(selected).items())
        return _Plan(sql, tuple(slots), converters)


@dataclass(frozen=True)
class Bound:
    """A compiled read and the values of one call: its rows when iterated (``Compiled.rows``), or its
    ``statement`` for a caller that runs several together and hands back the raw rows (``converted``)."""

    compiled: Compiled
    values: tuple
    db: str = "default"

    def __iter__(self):
        return iter(self.compiled.rows(*self.values, using=self.db))

    def statement(self) -> tuple[str, list]:
        return self.compiled.statement(*self.values, using=self.db)

    def converted(self, rows: list) -> list[tuple]:
        return self.compiled.converted(rows, using=self.db)


class Insert:
    """New rows of one model in ONE ``INSERT ... VALUES (...), (...) RETURNING id``: what
    ``bulk_create`` writes, without its per-call work.

    The statement's text depends only on the engine and the row count, so it is written once for
    each; every value is still prepared by its own field exactly as the ORM's insert prepares it
    (``pre_save(obj, add=True)``: ``auto_now_add`` stamps, then ``get_db_prep_save``), the related
    fields are checked as ``bulk_create`` checks them, and each row gets its id back. PostgreSQL gets
    plain VALUES rows rather than the UNNEST arrays ``bulk_create`` sends there (whose JSON payloads
    psycopg escapes one by one into array text). For the hot writes of every reflection pass (its
    events, its episode and the episode's line vectors), whose ORM insert cost more CPU than running it.
    """

    def __init__(self, model):
        self.model = model
        self.fields = [f for f in model._meta.concrete_fields if not f.primary_key]
        if any(hasattr(f, "get_placeholder") or f.db_returning or getattr(f, "generated", False) for f in self.fields):
            raise TypeError(f"{model.__name__}: a field with its own placeholder, or computed by the database, is not written by Insert")
        self._statements: dict[tuple[str, int], str] = {}

    def _sql(self, connection, rows: int) -> str:
        key = (connection.vendor, rows)
        sql = self._statements.get(key)
        if sql is None:
            ops, opts = connection.ops, self.model._meta
            returning, _ = ops.return_insert_columns([opts.pk])
            columns = ", ".join(ops.quote_name(f.column) for f in self.fields)
            values = ops.bulk_insert_sql(self.fields, [["%s"] * len(self.fields)] * rows)
            sql = f"{ops.insert_statement()} {ops.quote_name(opts.db_table)} ({columns}) {values} {returning}".rstrip()
            if len(self._statements) < 64:
                self._statements[key] = sql
        return sql

    def write(self, objs: list, using: str = "default") -> list:
        """Insert ``objs`` (none of them saved yet), set each one's id, and return them."""
        if not objs:
            return objs
        connection = connections[using]
        if not connection.features.can_return_rows_from_bulk_insert:  # an engine that cannot say the new ids
            return self.model._base_manager.using(using).bulk_create(objs)
        for obj in objs:
            if obj.pk is not None:
                raise ValueError(f"{self.model.__name__} {obj.pk} is saved already")
            obj._prepare_related_fields_for_save(operation_name="bulk_create")
        size = max(1, connection.ops.bulk_batch_size(self.fields, objs))
        if len(objs) <= size:
            self._write(objs, connection, using)
            return objs
        with transaction.atomic(using=using, savepoint=False):  # several statements: all or none, as bulk_create
            for start in range(0, len(objs), size):
                self._write(objs[start : start + size], connection, using)
        return objs

    def _write(self, batch: list, connection, using: str) -> None:
        params = [field.get_db_prep_save(field.pre_save(obj, True), connection) for obj in batch for field in self.fields]
        with connection.cursor() as cursor:
            cursor.execute(self._sql(connection, len(batch)), params)
            ids = cursor.fetchall()
        for obj, (pk, *_) in zip(batch, ids, strict=True):
            obj.pk = pk
            obj._state.adding = False
            obj._state.db = using


class Update:
    """``Model.objects.filter(a=.., b=..).update(x=.., y=..)`` -- plain equalities, no NULL among them --
    as ONE fixed statement: its text written once per engine, every SET value prepared by its field as
    the ORM's UPDATE prepares it (``get_db_prep_save``) and every WHERE value as the ``exact`` lookup
    does (``get_prep_value``, then ``get_db_prep_value``). ``run`` returns the rows changed, as
    ``update`` does. For the hot keyed updates of a reflection pass (a counterparty's profile, the
    conversation's signal), whose ORM UPDATE cost more CPU to build and compile than to run."""

    def __init__(self, model, set_fields: tuple[str, ...], where_fields: tuple[str, ...]):
        opts = model._meta
        self.model = model
        self.set_fields = [opts.get_field(name) for name in set_fields]
        self.where_fields = [opts.get_field(name) for name in where_fields]
        if any(hasattr(f, "get_placeholder") or not f.concrete for f in (*self.set_fields, *self.where_fields)):
            raise TypeError(f"{model.__name__}: Update writes plain columns")
        self._statements: dict[str, str] = {}

    def _sql(self, connection) -> str:
        sql = self._statements.get(connection.vendor)
        if sql is None:
            qn = connection.ops.quote_name
            sets = ", ".join(f"{qn(f.column)} = %s" for f in self.set_fields)
            where = " AND ".join(f"{qn(f.column)} = %s" for f in self.where_fields)
            sql = self._statements[connection.vendor] = f"UPDATE {qn(self.model._meta.db_table)} SET {sets} WHERE {where}"
        return sql

    def run(self, where: tuple, values: tuple, using: str = "default") -> int:
        """Set ``values`` (in ``set_fields``' order) on the rows whose ``where_fields`` equal ``where``."""
        if len(where) != len(self.where_fields) or len(values) != len(self.set_fields):
            raise TypeError(f"expected {len(self.where_fields)} keys and {len(self.set_fields)} values")
        if any(v is None for v in where):
            raise ValueError("Update compares with =: a NULL key matches nothing")
        connection = connections[using]
        params = [f.get_db_prep_save(v, connection) for f, v in zip(self.set_fields, values, strict=True)]
        params += [f.get_db_prep_value(f.get_prep_value(v), connection, prepared=True)
                   for f, v in zip(self.where_fields, where, strict=True)]
        with transaction.mark_for_rollback_on_error(using), connection.cursor() as cursor:
            cursor.execute(self._sql(connection), params)
            return cursor.rowcount


def in_model_order(model, names) -> tuple[str, ...]:
    """``names`` (attnames) in the order of the model's columns: the order ``Model.from_db`` takes a
    row's values in, so a read of these columns can be made into instances."""
    wanted = set(names)
    ordered = tuple(f.attname for f in model._meta.concrete_fields if f.attname in wanted)
    if len(ordered) != len(wanted):
        raise ValueError(f"not columns of {model.__name__}: {sorted(wanted - set(ordered))}")
    return ordered
