"""Vectors in the database: one field and one distance expression for both engines.

PostgreSQL stores pgvector ``vector`` (no fixed width: the width follows the configured model);
SQLite stores little-endian float32 BLOBs that sqlite-vec reads. ``CosineDistance`` compiles to
``<=>`` on PostgreSQL and ``vec_distance_cosine`` on SQLite, so ranking happens in SQL.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence

import numpy as np
from django.db import models
from django.db.models import Func, Value

Vector = Sequence[float]


def usable(vector: Vector | None) -> bool:
    """A zero or non-finite vector is no vector: no recall could ever return it."""
    if vector is None or len(vector) == 0:
        return False
    arr = np.asarray(vector, dtype=np.float64)
    return bool(np.all(np.isfinite(arr)) and np.any(arr != 0.0))


def to_blob(vector: Vector) -> bytes:
    return np.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes) -> list[float]:
    return np.frombuffer(blob, dtype="<f4").astype(float).tolist()


def _to_pg_text(vector: Vector) -> str:
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def to_pg_text(vector: Vector) -> str:
    """A query vector as pgvector's text input, for raw SQL (``%s::vector``)."""
    return _to_pg_text(vector)


def _from_pg(value) -> list[float]:
    if isinstance(value, str):
        return [float(x) for x in value.strip("[]").split(",") if x]
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        dim, _unused = struct.unpack_from(">HH", data)
        return list(struct.unpack_from(f">{dim}f", data, 4))
    return [float(x) for x in value]


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
        super().__init__(expression, Value(list(vector), output_field=VectorField()), **extra)

    def as_sql(self, compiler, connection, **extra_context):  # pragma: no cover - vendor methods below
        raise NotImplementedError(f"CosineDistance has no SQL for {connection.vendor}")

    def as_postgresql(self, compiler, connection, **extra_context):
        col, col_params = compiler.compile(self.source_expressions[0])
        q, q_params = compiler.compile(self.source_expressions[1])
        sql = f"(CASE WHEN vector_dims({col}) = {int(self.dim)} THEN ({col} <=> {q}::vector) END)"
        return sql, (*col_params, *col_params, *q_params)

    def as_sqlite(self, compiler, connection, **extra_context):
        col, col_params = compiler.compile(self.source_expressions[0])
        q, q_params = compiler.compile(self.source_expressions[1])
        sql = f"(CASE WHEN length({col}) = {4 * int(self.dim)} THEN vec_distance_cosine({col}, {q}) END)"
        return sql, (*col_params, *col_params, *q_params)


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
        if usable(vector):
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
