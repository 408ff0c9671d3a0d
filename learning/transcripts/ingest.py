"""The loop end to end: read transcripts, store episodes, extract shards, climb the ladder, judge
what it accepted, classify and draft recommendations, and recount telemetry.

Transcripts belong to the seat whose work they record; that seat's auxiliary chain and budget pay
for every model call, and every row carries it.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.db import transaction

from core import events
from core.providers.errors import ProviderError
from core.purposes import AnswerUnparseable
from core.scrub import scrub
from crewlet.errors import BadInput
from learning.transcripts import artifacts, ladder, shards, telemetry
from learning.transcripts.adapters import get_adapter
from learning.transcripts.models import Shard, TranscriptEpisode, TranscriptSource

if TYPE_CHECKING:
    from crewlet.models import Seat


@dataclass
class FileRead:
    """What one file gave this run (the per-file report)."""

    path: str
    bytes_read: int = 0
    human_messages: int = 0
    pseudo_user: Counter = field(default_factory=Counter)
    episode_ids: list = field(default_factory=list)
    warnings: int = 0
    records: dict = field(default_factory=dict)  # every record read, by type


@dataclass
class IngestSummary:
    files: int = 0
    bytes_read: int = 0
    sessions: set = field(default_factory=set)
    human_messages: int = 0
    pseudo_user: Counter = field(default_factory=Counter)
    scrubbed: Counter = field(default_factory=Counter)
    episodes: int = 0
    shards: list = field(default_factory=list)
    outcomes: Counter = field(default_factory=Counter)  # ladder status -> count
    decisions: list = field(default_factory=list)  # (shard, status, reason)
    judged: list = field(default_factory=list)  # judge answers
    recommendations: list = field(default_factory=list)
    covered: list = field(default_factory=list)
    inventory: list = field(default_factory=list)
    telemetry: telemetry.TelemetryReport | None = None
    warnings: list = field(default_factory=list)
    files_read: list = field(default_factory=list)  # FileRead, in order


def default_seat():
    """The company's first active seat (by creation), for transcripts nobody attributed."""
    from crewlet import config
    from crewlet.models import Seat

    config.current()  # a config file not yet applied creates its seats now
    seat = Seat.objects.filter(active=True).select_related("role", "company").order_by("created_at", "pk").first()
    if seat is None:
        raise BadInput("no active seat to attribute transcripts to; apply a config with seats first")
    return seat


def files_of(adapter, paths: list[str], warnings: list[str]) -> list[str]:
    found = []
    for path in paths:
        if not os.path.exists(path):
            warnings.append(f"{scrub(path)}: no such file or directory")
            continue
        found.extend(adapter.sources(os.path.abspath(path)))
    return found


READ_BATCH_BYTES = 16_000_000  # files are stored a batch of about this many bytes to a transaction


def _batches(files: list[str]) -> list[list[str]]:
    out: list[list[str]] = [[]]
    size = 0
    for path in files:
        if out[-1] and size >= READ_BATCH_BYTES:
            out.append([])
            size = 0
        out[-1].append(path)
        size += os.path.getsize(path) if os.path.exists(path) else 0
    return [batch for batch in out if batch]


def read_files(*, seat: Seat, adapter, files: list[str], summary: IngestSummary, progress=None) -> list[TranscriptEpisode]:
    """Read each file from its watermark and store what is new, a batch of files to a transaction."""
    new: list[TranscriptEpisode] = []
    for batch in _batches(files):
        with transaction.atomic():
            for path in batch:
                new.extend(_read_one(seat=seat, adapter=adapter, path=path, summary=summary, progress=progress))
    summary.episodes += len(new)
    return new


def _read_one(*, seat: Seat, adapter, path: str, summary: IngestSummary, progress=None) -> list[TranscriptEpisode]:
    """One file from its watermark: its new sessions and episodes stored, its figures added to the summary."""
    source, _ = TranscriptSource.objects.get_or_create(adapter=adapter.name, path=scrub(path), defaults={"seat": seat})
    result = adapter.read(path, source.watermark)
    stored = [] if shards.nothing_new(source, result) else shards.store_read(seat=seat, source=source, result=result)
    read = FileRead(path=source.path, bytes_read=result.bytes_read, episode_ids=[e.pk for e in stored], warnings=len(result.warnings),
                    records=result.records)
    summary.files_read.append(read)
    summary.files += 1
    summary.bytes_read += result.bytes_read
    summary.warnings.extend(result.warnings)
    summary.scrubbed.update(result.scrubbed)
    for seen in result.sessions:
        summary.sessions.add(seen.session_id)
        summary.human_messages += seen.human_messages
        summary.pseudo_user.update(seen.pseudo_user)
        read.human_messages += seen.human_messages
        read.pseudo_user.update(seen.pseudo_user)
    if progress is not None:
        progress.update(os.path.getsize(path) if os.path.exists(path) else 0)
    return stored



def unclimbed(seat: Seat) -> list[Shard]:
    """Shards stored without a vector that the embedding fill has since embedded: they climb now."""
    return list(
        Shard.objects.filter(seat__company_id=seat.company_id, status=Shard.PENDING, embedding__isnull=False)
        .exclude(evidence__has_key="distinct_sources")
        .select_related("seat")
    )


def climb(*, shards_in: list[Shard], summary: IngestSummary) -> None:
    """Each new shard through the ladder in order, against the company's pool read once and kept in memory;
    what it accepted goes to the judge before the next shard climbs, so a later shard meets it as
    published (the duplicate veto, corroboration). One transaction for the whole climb."""
    pools: dict[tuple, ladder.Pool] = {}
    for shard in shards_in:
        key = (shard.embedding_model, shard.embedding_dim)
        if shard.embedding is not None and shard.embedding_dim is not None and key not in pools:
            pools[key] = ladder.Pool(shard.seat.company_id, shard.embedding_model, shard.embedding_dim)
    for each in pools.values():
        each.adopt(shards_in)
    decided: list = []
    with transaction.atomic():
        for shard in sorted(shards_in, key=lambda s: s.pk):
            if shard.status != Shard.PENDING:
                continue  # folded into an earlier shard it recurred with
            pool = pools.get((shard.embedding_model, shard.embedding_dim))
            outcome = ladder.evaluate(shard, pool, sink=decided)
            summary.decisions.append((shard, outcome.status, outcome.reason))
            if outcome.status == Shard.ACCEPTED:
                try:
                    summary.judged.append(ladder.publish_memory(shard=shard, stage="background", pool=pool))
                except (ProviderError, AnswerUnparseable) as exc:
                    summary.warnings.append(f"shard {shard.pk}: the judge did not answer ({exc}); it stays accepted")
        events.publish_many(decided)
    for shard in shards_in:
        summary.outcomes[shard.status] += 1


def ingest(*, paths: list[str], seat: Seat | None = None, adapter: str = "claude-code", repo: str = "", progress=None) -> IngestSummary:
    """Run the whole loop over ``paths`` (files or folders) for ``seat``; bad lines are warnings, never a dead run."""
    seat = seat or default_seat()
    summary = IngestSummary()
    reader = get_adapter(adapter)
    files = files_of(reader, paths, summary.warnings)
    read_files(seat=seat, adapter=reader, files=files, summary=summary, progress=progress)
    with transaction.atomic():  # the rest of the run is one commit
        _learn(seat=seat, summary=summary, repo=repo)
    summary.telemetry = telemetry.refresh(company_id=seat.company_id)
    return summary


def _learn(*, seat: Seat, summary: IngestSummary, repo: str) -> None:
    todo = list(TranscriptEpisode.objects.filter(seat=seat, extracted_at__isnull=True).select_related("session").order_by("pk"))
    summary.shards = shards.extract(seat=seat, episodes=todo, warnings=summary.warnings)
    waiting = {s.pk: s for s in summary.shards}
    waiting.update((s.pk, s) for s in unclimbed(seat) if s.pk not in waiting)
    climb(shards_in=list(waiting.values()), summary=summary)
    published = list(Shard.objects.filter(seat__company_id=seat.company_id, status=Shard.PUBLISHED, classified_at__isnull=True))
    artifacts.classify(seat=seat, shards=published, warnings=summary.warnings)
    report = artifacts.recommend(seat=seat, repo_root=repo, warnings=summary.warnings)
    summary.recommendations, summary.covered, summary.inventory = report.recommendations, report.covered, report.inventory
