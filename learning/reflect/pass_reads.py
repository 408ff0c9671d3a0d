"""A pass's reads, fetched together: one round trip on PostgreSQL instead of one a read.

When the pass-wide gates open, the dispatcher gathers what the pass will read (``reads(ctx) ->
{name: queryset}`` of the skill-reflection gate and of each wired worker that declares it) and
fetches it here: on PostgreSQL every statement is sent before any answer is awaited (psycopg's
pipeline mode: one round trip). On SQLite there is no round trip to save: the dispatcher does not
gather them, each is read when a worker needs it (``fetch_together`` itself runs them one by one).
Each answer has the shape iterating its queryset gives -- model instances, tuples, or values for
a flat ``values_list`` -- so a consumer reads ``ctx.fetched(name, build_queryset)`` alike whether
the pass batched the read or not. A read may also be a statement compiled once
(``core.statements.Bound``: the hot reads of every engaged turn, whose queryset cost more CPU to
build and compile than to run); its rows are tuples either way.
"""

from __future__ import annotations

from django.core.exceptions import EmptyResultSet
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import QuerySet
from django.db.models.query import FlatValuesListIterable, ModelIterable, ValuesListIterable

from core.statements import Bound

SHAPES = (ModelIterable, ValuesListIterable, FlatValuesListIterable)


def saves_round_trips(alias: str = DEFAULT_DB_ALIAS) -> bool:
    """Whether fetching reads together saves anything: PostgreSQL's round trips. SQLite runs in the
    process, so a pass there reads each row when a worker needs it (and skips what none does)."""
    return connections[alias].vendor == "postgresql"


def _pipelined(connection, statements: list[tuple[str, list]]) -> list[list]:
    """Every statement sent before any answer is awaited, in psycopg's pipeline mode (one statement
    an ``execute``, each on its own cursor), then each cursor's rows."""
    connection.ensure_connection()
    cursors = [connection.cursor() for _ in statements]
    try:
        with connection.wrap_database_errors, connection.connection.pipeline():
            for cursor, (sql, params) in zip(cursors, statements, strict=True):
                cursor.execute(sql, params)
        return [cursor.fetchall() for cursor in cursors]
    finally:
        for cursor in cursors:
            cursor.close()


def _one_by_one(connection, statements: list[tuple[str, list]]) -> list[list]:
    raw = []
    with connection.cursor() as cursor:
        for sql, params in statements:
            cursor.execute(sql, params)
            raw.append(cursor.fetchall())
    return raw


def _compiled(qs: QuerySet | Bound):
    """``(compiler, sql, params)``, or None for a query that matches nothing by construction (``id__in=[]``);
    a read compiled once (``core.statements.Bound``) has its statement already and no compiler."""
    if isinstance(qs, Bound):
        sql, params = qs.statement()
        return None, sql, params
    if qs._iterable_class not in SHAPES:
        raise TypeError(f"fetch_together reads model, values_list or flat values_list querysets, not {qs._iterable_class.__name__}")
    if getattr(qs, "_prefetch_related_lookups", ()):
        raise TypeError("fetch_together does not prefetch related rows")
    compiler = qs.query.get_compiler(using=qs.db)
    try:
        sql, params = compiler.as_sql()
    except EmptyResultSet:
        return None
    if qs._iterable_class is ModelIterable and (compiler.annotation_col_map or compiler.klass_info.get("related_klass_infos")):
        raise TypeError("fetch_together builds plain model rows (no select_related, no annotations)")
    return compiler, sql, list(params)


def _shaped(qs: QuerySet | Bound, compiler, rows: list) -> list:
    """``rows`` as iterating ``qs`` gives them (the backend's converters applied)."""
    if isinstance(qs, Bound):
        return qs.converted(rows)
    converted = compiler.results_iter(results=[rows], tuple_expected=True)
    if qs._iterable_class is FlatValuesListIterable:
        return [row[0] for row in converted]
    if qs._iterable_class is ValuesListIterable:
        return list(converted)
    start, end = compiler.klass_info["select_fields"][0], compiler.klass_info["select_fields"][-1] + 1
    names = [col.target.attname for col, _, _ in compiler.select[start:end]]
    model = compiler.klass_info["model"]
    return [model.from_db(qs.db, names, row[start:end]) for row in converted]


def fetch_together(querysets: dict[str, QuerySet | Bound]) -> dict[str, list]:
    """Every queryset's rows by name, the statements sent in one round trip where the engine allows."""
    compiled = {name: _compiled(qs) for name, qs in querysets.items()}
    sent = [name for name, c in compiled.items() if c is not None]
    answers: dict[str, list] = {name: [] for name in compiled}
    if not sent:
        return answers
    aliases = {querysets[name].db for name in sent}
    if len(aliases) != 1:
        raise ValueError(f"fetch_together reads one database, not {sorted(aliases)}")
    connection = connections[aliases.pop()]
    statements = [(compiled[name][1], compiled[name][2]) for name in sent]
    if connection.vendor == "postgresql" and len(statements) > 1:
        raw = _pipelined(connection, statements)
    else:
        raw = _one_by_one(connection, statements)
    if len(raw) != len(sent):
        raise RuntimeError(f"{len(sent)} statements sent, {len(raw)} answers read")
    for name, rows in zip(sent, raw, strict=True):
        answers[name] = _shaped(querysets[name], compiled[name][0], rows)
    return answers
