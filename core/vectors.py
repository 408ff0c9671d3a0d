"""Vectors in PostgreSQL: one pgvector field and one cosine-distance expression, ranked in SQL.

The ``vector`` column carries no fixed width: the width follows the configured embedding model, and
every row records its model and width, so a query compares only rows of its own model and width.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

import numpy as np
from django.db import models
from django.db.models import Func, Value

Vector = Sequence[float]
log = logging.getLogger("core.vectors")


def usable(vector: Vector | None) -> bool:
    """A zero or non-finite vector is no vector: no recall could ever return it."""
    if vector is None or len(vector) == 0:
        return False
    arr = np.asarray(vector, dtype=np.float64)
    return bool(np.all(np.isfinite(arr)) and np.any(arr != 0.0))


def to_pg_text(vector: Vector) -> str:
    """A vector in pgvector's text form, for a ``%s::vector`` parameter."""
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def distance_sql(alias: str, dim: int) -> str:
    """The cosine distance of ``alias``'s vector, cast to the query's width, to a ``%s`` query vector. The
    caller filters the rows on ``embedding_dim = dim`` first (and so matches ``ensure_index``'s predicate)."""
    return f"({alias}.embedding::vector({int(dim)}) <=> %s::vector({int(dim)}))"


# tables searched by meaning at a scale where an exact scan of a seat is too slow
INDEXED_TABLES = ("episodes", "episode_pieces")


def index_name(table: str, dim: int) -> str:
    return f"{table}_embedding_hnsw_{int(dim)}"


def ensure_index(table: str, dim: int, *, using: str = "default") -> bool:
    """Create the approximate (HNSW, cosine) index of ``table``'s vectors of width ``dim`` unless it exists;
    True when it was created. A column of no fixed width takes one index per width, over that width's
    rows: it orders ``distance_sql``'s expression and filters by seat and model as it scans
    (``hnsw.iterative_scan``, set per connection in settings)."""
    from django.db import DatabaseError, connections, transaction

    name = index_name(table, dim)
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [name])
        if cursor.fetchone():
            return False
        try:
            with transaction.atomic(using=using):
                cursor.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {table} USING hnsw"
                               f" ((embedding::vector({int(dim)})) vector_cosine_ops) WHERE embedding_dim = {int(dim)}")
        except DatabaseError as exc:  # pgvector before 0.5 has no HNSW: every search scans exactly
            log.warning("no approximate index %s: %s", name, exc)
            return False
    return True


def register_pgvector(connection) -> bool:
    """Register pgvector's psycopg adapters on a Django connection; False before the extension exists."""
    raw = connection.connection
    if raw is None:
        return False
    if raw.adapters.types.get("vector") is not None:
        return True
    import psycopg
    from pgvector.psycopg import register_vector

    try:
        register_vector(raw)
    except psycopg.ProgrammingError:  # no vector extension yet (before the first migration)
        return False
    return True


def _from_db(value) -> list[float]:
    if hasattr(value, "to_list"):  # pgvector.Vector, from the registered loader
        return value.to_list()
    if isinstance(value, str):
        return [float(x) for x in value.strip("[]").split(",") if x]
    return [float(x) for x in value]


class VectorField(models.Field):
    """A float vector of any width: pgvector's ``vector`` type."""

    description = "Embedding vector"

    def db_type(self, connection):
        return "vector"

    def from_db_value(self, value, expression, connection):
        return None if value is None else _from_db(value)

    def to_python(self, value):
        if value is None or isinstance(value, list):
            return value
        return [float(x) for x in value]

    def get_db_prep_value(self, value, connection, prepared=False):
        return None if value is None else to_pg_text(value)


class CosineDistance(Func):
    """Cosine distance between a vector column and a query vector (pgvector's ``<=>``).

    Callers filter on the row's model and width first (``nearest``): pgvector refuses to compare
    vectors of different widths.
    """

    output_field = models.FloatField()

    def __init__(self, expression, vector: Vector, **extra):
        self.dim = len(vector)
        super().__init__(expression, Value(to_pg_text(vector)), **extra)

    def as_sql(self, compiler, connection, function=None, template=None, arg_joiner=None, **extra_context):
        col, col_params = compiler.compile(self.source_expressions[0])
        query, query_params = compiler.compile(self.source_expressions[1])
        dim = int(self.dim)  # the cast lets an index of this width (``ensure_index``) serve the ordering
        return f"({col}::vector({dim}) <=> {query}::vector({dim}))", (*col_params, *query_params)


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
    """``(id, cosine distance)`` of the ``limit`` rows nearest ``vector``, nearest first (ties: newest id),
    none farther than ``max_distance``. No vector comes back."""
    rows = nearest(queryset, vector, model, field=field).values_list("id", "distance")[: int(limit)]
    return [(i, d) for i, d in rows if max_distance is None or d <= max_distance]


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
