"""Vectors in the database: one field and one distance expression for both engines.

PostgreSQL stores pgvector ``vector`` (no fixed width: the width follows the configured model);
SQLite stores little-endian float32 BLOBs that sqlite-vec reads. ``CosineDistance`` compiles to
``<=>`` on PostgreSQL and ``vec_distance_cosine`` on SQLite, so ranking happens in SQL.

On PostgreSQL every connection registers the ``pgvector`` package's psycopg adapters
(``register_pgvector``): vectors are dumped and loaded by pgvector's own code, and ``ranked_ids``
sends its query vector in pgvector's binary format over a server-side-bound, prepared statement.
"""

from __future__ import annotations

import datetime
import functools
import math
import struct
import uuid
from collections.abc import Sequence
from decimal import Decimal
from typing import NamedTuple

import numpy as np
from django.core.exceptions import EmptyResultSet, FullResultSet
from django.db import OperationalError, connections, models
from django.db.models import Func, Value
from django.db.models.expressions import Col
from django.db.models.fields.related_lookups import (
    RelatedExact,
    RelatedGreaterThan,
    RelatedGreaterThanOrEqual,
    RelatedIsNull,
    RelatedLessThan,
    RelatedLessThanOrEqual,
)
from django.db.models.lookups import Exact, GreaterThan, GreaterThanOrEqual, IsNull, LessThan, LessThanOrEqual
from django.db.models.sql.datastructures import BaseTable
from django.db.models.sql.where import WhereNode

Vector = Sequence[float]


def usable(vector: Vector | None) -> bool:
    """A zero or non-finite vector is no vector: no recall could ever return it."""
    if vector is None or len(vector) == 0:
        return False
    arr = np.asarray(vector, dtype=np.float64)
    return bool(np.all(np.isfinite(arr)) and np.any(arr != 0.0))


def to_blob(vector: Vector) -> bytes:
    """float32, little-endian: what sqlite-vec reads. A list packs straight from its floats (half
    numpy's time for a 384-wide one: no array in between); an array, or a value too large for
    float32 (numpy's ``inf``), goes through numpy."""
    if type(vector) is list:
        try:
            return struct.pack(f"<{len(vector)}f", *vector)
        except (OverflowError, struct.error):
            pass
    return np.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes) -> list[float]:
    return np.frombuffer(blob, dtype="<f4").astype(float).tolist()


def _to_pg_text(vector: Vector) -> str:
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def to_pg_text(vector: Vector) -> str:
    """A query vector as pgvector's text input, for raw SQL (``%s::vector``)."""
    return _to_pg_text(vector)


def register_pgvector(connection) -> bool:
    """Register pgvector's psycopg dumpers and loaders on a Django PostgreSQL connection, once.

    False while the database has no ``vector`` type yet (before the first migration); the next
    vector query tries again.
    """
    raw = connection.connection
    if raw is None:
        return False
    if raw.adapters.types.get("vector") is not None:
        return True
    import psycopg
    from pgvector.psycopg import register_vector

    try:
        register_vector(raw)  # reads the types' oids (to_regtype: no error when they are missing)
    except psycopg.ProgrammingError:  # no vector extension yet
        return False
    return True


def _from_pg(value) -> list[float]:
    if hasattr(value, "to_list"):  # pgvector.Vector, from the registered loader
        return value.to_list()
    if isinstance(value, str):
        return [float(x) for x in value.strip("[]").split(",") if x]
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        dim, _unused = struct.unpack_from(">HH", data)
        return list(struct.unpack_from(f">{dim}f", data, 4))
    return [float(x) for x in value]


@functools.cache
def _hashable_pg_vector():
    """pgvector's ``Vector``, hashable: the ORM hashes an ORDER BY's parameters (``nearest``'s distance)."""
    from pgvector import Vector as PgVector

    class HashableVector(PgVector):
        def __hash__(self) -> int:
            return hash(self.to_numpy().tobytes())

    return HashableVector


class VectorField(models.Field):
    """A float vector of any width: pgvector ``vector`` on PostgreSQL, float32 BLOB on SQLite."""

    description = "Embedding vector"

    def db_type(self, connection):
        return "vector" if connection.vendor == "postgresql" else "blob"

    def from_db_value(self, value, expression, connection):
        if value is None:
            return None
        if connection.vendor == "postgresql":
            return _from_pg(value)
        return from_blob(value)

    def to_python(self, value):
        if value is None or isinstance(value, list):
            return value
        return [float(x) for x in value]

    def get_db_prep_value(self, value, connection, prepared=False):
        if value is None:
            return None
        if connection.vendor == "postgresql":
            if connection.connection is not None and connection.connection.adapters.types.get("vector") is not None:
                return _hashable_pg_vector()(np.asarray(value, dtype=np.float32))
            return _to_pg_text(value)
        return to_blob(value)


class CosineDistance(Func):
    """Cosine distance between a vector column and a query vector, computed by the database.

    Rows whose stored width differs from the query's yield NULL instead of an error, so a
    company that moved models never breaks a read; callers still filter on the model name.
    """

    output_field = models.FloatField()

    def __init__(self, expression, vector: Vector, **extra):
        self.dim = len(vector)
        # a tuple: the ORM hashes expressions (ordering, grouping); hashing a tuple of floats is one C
        # call, where a list goes through make_hashable element by element (most of the compile time)
        super().__init__(expression, Value(tuple(float(x) for x in vector), output_field=VectorField()), **extra)

    def as_sql(self, compiler, connection, **extra_context):  # pragma: no cover - vendor methods below
        raise NotImplementedError(f"CosineDistance has no SQL for {connection.vendor}")

    def as_postgresql(self, compiler, connection, **extra_context):
        col, col_params = compiler.compile(self.source_expressions[0])
        q, q_params = compiler.compile(self.source_expressions[1])
        return distance_sql("postgresql", col, self.dim, q), (*col_params, *col_params, *q_params)

    def as_sqlite(self, compiler, connection, **extra_context):
        col, col_params = compiler.compile(self.source_expressions[0])
        q, q_params = compiler.compile(self.source_expressions[1])
        return distance_sql("sqlite", col, self.dim, q), (*col_params, *col_params, *q_params)


# cosine distance of a column to the query vector placeholder, per engine; NULL for a row of another width
SQLITE_DISTANCE = "vec_distance_cosine({col}, {query})"  # the function alone: an error for a vector of another width
DISTANCE_SQL = {
    "postgresql": "(CASE WHEN vector_dims({col}) = {dim} THEN ({col} <=> {query}::vector) END)",
    "sqlite": f"(CASE WHEN length({{col}}) = {{bytes}} THEN {SQLITE_DISTANCE} END)",
}


def distance_sql(vendor: str, col: str, dim: int, query: str = "%s") -> str:
    """The cosine distance of ``col`` to ``query``; NotImplementedError on an engine without vector search."""
    template = DISTANCE_SQL.get(vendor)
    if template is None:
        raise NotImplementedError(f"no cosine distance for {vendor}")
    return template.format(col=col, dim=int(dim), bytes=4 * int(dim), query=query)


def cosine(a: Vector, b: Vector) -> float:
    """Cosine similarity in Python, for the few places that compare two in-memory vectors."""
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(x * x for x in b))
    if na == 0 or nb == 0:
        return 0.0
    return sum(x * y for x, y in zip(a, b, strict=False)) / (na * nb)


def split_words(text: str, max_chars: int) -> list[str]:
    """Split text between words into pieces of at most ``max_chars`` (a single longer word is its own piece)."""
    words, pieces, current = text.split(), [], ""
    for word in words:
        candidate = f"{current} {word}" if current else word
        if len(candidate) <= max_chars or not current:
            current = candidate
        else:
            pieces.append(current)
            current = word
    if current:
        pieces.append(current)
    return pieces


def pool(vectors: Sequence[Vector], weights: Sequence[float] | None = None) -> list[float] | None:
    """Mean-pool piece vectors (weighted by piece length) into one unit vector; None if unusable."""
    usable_vs = [(v, w) for v, w in zip(vectors, weights or [1.0] * len(vectors), strict=False) if usable(v)]
    if not usable_vs:
        return None
    arr = np.asarray([v for v, _ in usable_vs], dtype=np.float64)
    w = np.asarray([w for _, w in usable_vs], dtype=np.float64)
    mean = (arr * w[:, None]).sum(axis=0) / w.sum()
    norm = np.linalg.norm(mean)
    if not np.isfinite(norm) or norm == 0:
        return None
    return (mean / norm).tolist()


class EmbeddedMixin(models.Model):
    """The columns every embedded row carries: the vector, the model it came from and its width."""

    embedding = VectorField(null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True, default="")
    embedding_dim = models.PositiveIntegerField(null=True, blank=True)
    embed_held_until = models.DateTimeField(null=True, blank=True)
    embed_pieces = models.JSONField(null=True, blank=True)

    class Meta:
        abstract = True

    def set_vector(self, vector: Vector | None, model: str) -> None:
        if vector is not None and usable(vector):
            self.embedding, self.embedding_model, self.embedding_dim = list(vector), model, len(vector)
        else:
            self.embedding, self.embedding_model, self.embedding_dim = None, "", None


def nearest(queryset, vector: Vector, model: str, *, field: str = "embedding"):
    """Rows of the query's own model and width, annotated with ``distance`` and ranked in SQL."""
    return (
        queryset.filter(**{f"{field}__isnull": False, "embedding_model": model, "embedding_dim": len(vector)})
        .annotate(distance=CosineDistance(field, vector))
        .order_by("distance", "-id")
    )


def ranked_ids(
    queryset, vector: Vector, model: str, *, limit: int, max_distance: float | None = None, field: str = "embedding"
) -> list[tuple[int, float]]:
    """``(id, cosine distance)`` of the ``limit`` rows nearest ``vector``, nearest first (ties: newest id).

    Only rows of ``queryset`` of the query's own model and width are ranked, and rows past
    ``max_distance`` are dropped. No vector comes back, the query vector is sent once (binary on
    PostgreSQL), and the distance is computed once per row: the threshold is applied to the ranked
    rows here (sorted by that distance, the rows within it are a prefix), not as a second distance
    expression in SQL. The statement is built once per queryset shape (``_statement``) and, on
    SQLite, run on the driver's own cursor (``_sqlite_rows``).
    """
    query = queryset.query
    if query.distinct or query.group_by or query.combinator or query.low_mark or query.high_mark is not None:
        raise ValueError("ranked_ids ranks a plain filtered queryset (no distinct, grouping, union or slice)")
    connection = connections[queryset.db]
    connection.close_if_health_check_failed()  # as Django's own cursor() does before a statement
    connection.ensure_connection()
    try:
        ranking, params = _statement(queryset, field, model, len(vector), int(limit), connection)
    except EmptyResultSet:  # a filter no row can meet (``id__in=[]``)
        return []
    if connection.vendor == "postgresql":
        rows = _pg_rows(connection, ranking.sql, vector, params)
    else:
        rows = _sqlite_ranked_rows(connection, ranking, [to_blob(vector), *params])
    if not rows or (rows[-1][1] is not None and (max_distance is None or rows[-1][1] <= max_distance)):
        return rows  # every row ranked and within the threshold (NULLs sort last)
    out = []
    for row_id, distance in rows:
        if distance is None or (max_distance is not None and distance > max_distance):
            break
        out.append((row_id, distance))
    return out


class _Ranking(NamedTuple):
    """A ranking statement in Django's placeholders and in the driver's (``?`` on SQLite).

    On SQLite ``sql`` leaves the width to the row's ``embedding_dim`` (the floor's statement) and
    ``checked_sql`` also reads each stored vector's length: the one to run when ``sql`` fails.
    On PostgreSQL ``sql`` checks the width itself and there is no second statement.
    """

    sql: str
    driver_sql: str
    checked_sql: str | None = None
    checked_driver_sql: str | None = None


# the ranking statement per queryset shape; bounded (cleared when full)
_STATEMENTS: dict[tuple, _Ranking] = {}
_STATEMENTS_MAX = 512


def _statement(queryset, field: str, model: str, dim: int, limit: int, connection) -> tuple[_Ranking, list]:
    """``(ranking, params)``: the ranking of ``queryset``'s rows with a vector of ``model`` and width
    ``dim``, and its parameters without the query vector's own (it comes first).

    A single-table queryset whose WHERE is made of plain comparisons of its own columns to values
    (``seat=``, ``kind=``, ``ttl_until__gt=``, ``__isnull``, under AND / OR / NOT: every recall
    scope) is compiled once per shape -- the tree with its values taken out -- and afterwards
    only its values are prepared, by each lookup's own ``get_db_prep_lookup``, as the compiler
    would. A shape is remembered only once its prepared values equal the compiler's parameters.
    Any other queryset is compiled on every call.
    """
    query = queryset.query
    leaves: list = []
    shape = _where_shape(query.where, leaves) if _one_table(query) else None
    key = None
    if shape is not None:
        key = (connection.alias, queryset.model, query.base_table, field, dim, limit, shape)
        known = _STATEMENTS.get(key)
        if known is not None:
            return known, [*_leaf_params(leaves, connection), model, dim]
    alias, scope_sql, checked_scope_sql, params = _scope(queryset, field, model, dim, connection)
    checked_sql = _ranking_sql(connection, queryset.model, alias, field, dim, limit, checked_scope_sql, checked=True)
    if connection.vendor == "sqlite":
        sql = _ranking_sql(connection, queryset.model, alias, field, dim, limit, scope_sql, checked=False)
        ranking = _Ranking(sql, _qmark(sql), checked_sql, _qmark(checked_sql))
    else:
        ranking = _Ranking(checked_sql, checked_sql)
    if key is not None and [*_leaf_params(leaves, connection), model, dim] == list(params):
        if len(_STATEMENTS) >= _STATEMENTS_MAX:
            _STATEMENTS.clear()
        _STATEMENTS[key] = ranking
    return ranking, params


def _qmark(sql: str) -> str:
    """A statement in SQLite's driver placeholders: the rewrite Django's SQLite cursor does on every execute."""
    from django.db.backends.sqlite3.base import FORMAT_QMARK_REGEX

    return FORMAT_QMARK_REGEX.sub("?", sql).replace("%%", "%")


def _one_table(query) -> bool:
    """True when the query reads its own table alone: no join in use, no extra SQL, no annotation."""
    if query.extra or query.extra_tables or query.annotations:
        return False
    refcount = query.alias_refcount
    return all(isinstance(table, BaseTable) or not refcount.get(a) for a, table in query.alias_map.items())


# lookups whose SQL is ``column <op> %s`` whatever the value, the value prepared by get_db_prep_lookup
_VALUE_LOOKUPS = frozenset({Exact, GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual, RelatedExact,
                            RelatedGreaterThan, RelatedGreaterThanOrEqual, RelatedLessThan, RelatedLessThanOrEqual})
_NULL_LOOKUPS = frozenset({IsNull, RelatedIsNull})  # ``column IS [NOT] NULL``: no parameter, the value in the shape
# value types whose SQL never depends on the value (a bool may compile to a bare column: not here)
_PLAIN_VALUES = frozenset({int, float, str, Decimal, datetime.datetime, datetime.date, uuid.UUID})


def _where_shape(node, leaves: list):
    """A hashable shape of a WHERE tree (connectors, negations, each leaf's lookup, column and value
    type), appending the leaves that carry a parameter to ``leaves`` in the compiler's order; None
    when some part is not a plain comparison of a column of the query's own table to a value."""
    if type(node) is WhereNode:
        parts = []
        for child in node.children:
            part = _where_shape(child, leaves)
            if part is None:
                return None
            parts.append(part)
        return node.connector, node.negated, tuple(parts)
    kind, lhs = type(node), getattr(node, "lhs", None)
    if type(lhs) is not Col:
        return None
    if kind in _NULL_LOOKUPS:
        return (kind, lhs.alias, lhs.target.column, node.rhs) if type(node.rhs) is bool else None
    if kind in _VALUE_LOOKUPS and type(node.rhs) in _PLAIN_VALUES:
        leaves.append(node)
        return kind, lhs.alias, lhs.target.column, type(node.rhs)
    return None


def _leaf_params(leaves: list, connection) -> list:
    return [p for leaf in leaves for p in leaf.get_db_prep_lookup(leaf.rhs, connection)[1]]


def _scope(queryset, field: str, model: str, dim: int, connection) -> tuple[str, str, str, list]:
    """``(table alias, " FROM ... WHERE ...", the same checked, params)``: the rows of ``queryset``
    with a vector of ``model`` and width ``dim`` by their ``embedding_model`` and ``embedding_dim``
    columns; the checked scope also asks for a vector that is there at all.

    A single-table queryset (every recall scope: a seat's rows, its live ones) has only its own
    WHERE compiled, parenthesised, and the vector's conditions appended as fixed SQL: no queryset
    clones, no select list, no join setup per query. Any other shape goes through the whole
    compiler (both scopes then test the vector for NULL). ``EmptyResultSet`` when no row can match.
    """
    query = queryset.query
    meta = queryset.model._meta
    if _one_table(query):
        alias = query.base_table or meta.db_table
        qn = connection.ops.quote_name
        mine = (f"{qn(alias)}.{qn(meta.get_field('embedding_model').column)} = %s"
                f" AND {qn(alias)}.{qn(meta.get_field('embedding_dim').column)} = %s")
        present = f"{qn(alias)}.{qn(meta.get_field(field).column)} IS NOT NULL AND "
        try:
            where_sql, where_params = query.get_compiler(connection=connection).compile(query.where)
        except FullResultSet:  # no filter of its own
            return alias, f" FROM {qn(alias)} WHERE {mine}", f" FROM {qn(alias)} WHERE {present}{mine}", [model, dim]
        scope = f" FROM {qn(alias)} WHERE ({where_sql}) AND "
        return alias, scope + mine, scope + present + mine, [*where_params, model, dim]
    base = (queryset.filter(**{f"{field}__isnull": False, "embedding_model": model, "embedding_dim": dim})
            .order_by().values_list("pk"))
    sql, params = base.query.get_compiler(connection=connection).as_sql()
    start = sql.index(" FROM ")  # the select list is the primary key alone: no user text in it
    return base.query.base_table or meta.db_table, sql[start:], sql[start:], list(params)


def _ranking_sql(connection, model_class, alias: str, field: str, dim: int, limit: int, scope_sql: str, *,
                 checked: bool) -> str:
    """The ranking around a scope: ids and distances, nearest first, ties to the newest id. The
    distance is ``distance_sql``'s (NULL for a stored vector of another width) when ``checked``,
    else the engine's bare distance function (SQLite only)."""
    qn = connection.ops.quote_name
    meta = model_class._meta
    col = f"{qn(alias)}.{qn(meta.get_field(field).column)}"
    pk = f"{qn(alias)}.{qn(meta.pk.column)}"
    distance = distance_sql(connection.vendor, col, dim) if checked else SQLITE_DISTANCE.format(col=col, query="%s")
    return (
        f"SELECT {pk}, {distance} AS crewlet_distance"
        f"{scope_sql} ORDER BY crewlet_distance ASC NULLS LAST, {pk} DESC LIMIT {limit}"
    )


def _sqlite_ranked_rows(connection, ranking: _Ranking, params: list) -> list[tuple]:
    """Run a ranking on SQLite: the statement without a width check first, as cheap as a hand-written
    one (the row's ``embedding_dim`` already names the query's width). sqlite-vec refuses a vector
    whose stored width is not the one its ``embedding_dim`` claims, or a missing one under a width:
    the statement fails and the checked one (such rows rank nowhere) runs instead. A failed read
    leaves SQLite's transaction as it was."""
    try:
        return _sqlite_rows(connection, ranking.sql, ranking.driver_sql, params)
    except OperationalError:
        assert ranking.checked_sql is not None and ranking.checked_driver_sql is not None  # SQLite's always has one
        return _sqlite_rows(connection, ranking.checked_sql, ranking.checked_driver_sql, params)


def _sqlite_rows(connection, sql: str, driver_sql: str, params: list) -> list[tuple]:
    """Run a ranking on SQLite, on the driver's own connection: no cursor wrapper and no placeholder
    rewrite per call, the same connection (so the same transaction) as every other statement, driver
    errors raised as Django's. While something watches statements (execute wrappers, the query
    log, ``CaptureQueriesContext``), through Django's own cursor instead, so they see it."""
    if connection.execute_wrappers or connection.queries_logged:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()
    connection.validate_thread_sharing()
    connection.validate_no_broken_transaction()
    with connection.wrap_database_errors:
        return connection.connection.execute(driver_sql, params).fetchall()


def _pg_rows(connection, sql: str, vector: Vector, params: list) -> list[tuple]:
    """Run a ranking on PostgreSQL with the query vector first, in pgvector's binary format.

    On psycopg's server-side-binding cursor (Django's connections default to client-side binding,
    which would spell the vector out as text), wrapped as Django wraps its own: execute wrappers,
    query logging and ``DatabaseError`` behave as on every other read.
    """
    import psycopg
    from pgvector import Vector as PgVector

    register_pgvector(connection)
    raw = psycopg.Cursor(connection.connection)
    cursor = connection.make_debug_cursor(raw) if connection.queries_logged else connection.make_cursor(raw)
    with cursor:
        cursor.execute(sql, [PgVector(np.asarray(vector, dtype=np.float32)), *params])
        return cursor.fetchall()


def nearest_rows(queryset, vector: Vector, model: str, *, limit: int, max_distance: float | None = None):
    """The rows ``ranked_ids`` names, nearest first, each with ``distance`` set; read without their vectors."""
    ranked = ranked_ids(queryset, vector, model, limit=limit, max_distance=max_distance)
    if not ranked:
        return []
    rows = queryset.model._default_manager.using(queryset.db).defer("embedding").in_bulk([i for i, _ in ranked])
    out = []
    for row_id, distance in ranked:
        row = rows.get(row_id)
        if row is not None:
            row.distance = distance
            out.append(row)
    return out
