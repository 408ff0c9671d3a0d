"""Demo step: the foundation. Apply the config, show the engine and the embedding model, issue
the seats' tokens, and make one embed + cosine search round trip in SQL."""

from __future__ import annotations

import time
from pathlib import Path

from django.conf import settings
from django.db import connection
from django.utils import timezone

from core.providers.embeddings import embed_many, embed_one, get_embedder
from core.vectors import nearest
from crewlet import config
from crewlet.models import ApiToken, Company, ConfigRevision, Seat
from learning.models import DiaryEntry

DEMO_SEAT = "ana"
DEMO_NOTES = [
    "The staging deploy fails when a migration locks the orders table; run it with lock_timeout set.",
    "Ana prefers short status updates in the team channel, with the ticket key first.",
    "The Friday team lunch moved to the Thai place on 5th street.",
]
DEMO_QUERY = "why did the database migration break the release?"


def run(ctx) -> None:
    _apply_config(ctx)
    _show_engine(ctx)
    embedder = _show_embedder(ctx)
    _issue_tokens(ctx)
    if embedder is not None:
        _round_trip(ctx, embedder)


def _apply_config(ctx) -> None:
    path = Path(settings.CREWLET_CONFIG_PATH)
    ctx.heading(f"Config: {path}")
    text = path.read_text(encoding="utf-8")
    config.apply_text(text, path=str(path))
    revision = ConfigRevision.objects.first()
    assert revision is not None  # apply_text just stored it
    summary = revision.summary
    ctx.line(f"applied revision {revision.sha256[:12]}: company {summary['company']!r}, "
             f"{len(summary['units'])} units, {len(summary['roles'])} roles, {len(summary['seats'])} seats")


def engine_description() -> str:
    """The database server's version, with the vector extension's version."""
    with connection.cursor() as cursor:
        cursor.execute("show server_version")
        (server,) = cursor.fetchone()
        cursor.execute("select extversion from pg_extension where extname = 'vector'")
        row = cursor.fetchone()
        return f"PostgreSQL {server} with pgvector {row[0] if row else '(not installed)'}"


def _show_engine(ctx) -> None:
    ctx.heading("Database")
    ctx.line(engine_description())
    where = connection.settings_dict
    ctx.line(f"database {where['NAME']!r} at {where['HOST'] or 'localhost'}"
             + (f":{where['PORT']}" if where.get("PORT") else ""))


def _show_embedder(ctx):
    ctx.heading("Embedding model")
    embedder = get_embedder()
    if embedder is None:
        ctx.line("embeddings are off (providers.embeddings.kind = 'none'): rows are stored without vectors")
        return None
    started = time.monotonic()
    load = getattr(embedder, "load", None)
    seconds = load() if load is not None else None
    if seconds is None:
        seconds = time.monotonic() - started
    width = embedder.dim if embedder.dim is not None else "unknown until the first answer"
    ctx.line(f"{embedder.model} ({type(embedder).__name__}), width {width}, loaded in {seconds:.1f}s, "
             f"splits past {embedder.max_input_chars} characters")
    return embedder


def _issue_tokens(ctx) -> None:
    company = Company.objects.get(name=config.current().company.name)
    ctx.heading(f"Seats of {company.name}")
    for seat in Seat.objects.filter(company=company).select_related("role", "unit").order_by("handle"):
        _token, ctx.tokens[seat.handle] = ApiToken.issue(company=company, seat=seat, label="demo")
        role = seat.role.name if seat.role else "-"
        unit = seat.unit.key if seat.unit else "-"
        ctx.line(f"{seat.handle:<6} role {role:<7} unit {unit:<9} token {ctx.tokens[seat.handle]}")
    _token, ctx.operator_token = ApiToken.issue(company=company, kind=ApiToken.OPERATOR, label="demo operator")
    ctx.line(f"operator token {ctx.operator_token} (reads every seat of {company.name})")


def _round_trip(ctx, embedder) -> None:
    seat = Seat.objects.get(handle=DEMO_SEAT)
    ctx.heading(f"Embed and search: three notes for {seat.handle}, ranked in SQL")
    started = time.monotonic()
    results = embed_many(DEMO_NOTES, budget=None, embedder=embedder)
    embed_ms = (time.monotonic() - started) * 1000
    now = timezone.now()
    for content, result in zip(DEMO_NOTES, results, strict=True):
        entry = DiaryEntry(seat=seat, kind=DiaryEntry.LONG, content=content, source="demo", created_at=now)
        entry.set_vector(result.vector, result.model)
        entry.save()
    query = embed_one(DEMO_QUERY, budget=None, embedder=embedder)
    ctx.line(f"embedded {len(DEMO_NOTES)} notes in {embed_ms:.0f} ms; query: {DEMO_QUERY!r} ({query.status})")
    if query.vector is None:
        ctx.line("the query has no vector, so nothing can be ranked")
        return
    for rank, row in enumerate(nearest(DiaryEntry.objects.filter(seat=seat), query.vector, query.model), 1):
        ctx.line(f"  {rank}. distance {row.distance:.3f}  {row.content}")
