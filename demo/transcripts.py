"""Demo step: the fixture transcripts through scrubbing, the ladder, the judge, drafting and the boundary."""

from __future__ import annotations

import dataclasses
import json
import shutil
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from core.models import Event
from crewlet import config
from crewlet.config import schema
from crewlet.errors import Conflict
from learning.transcripts import ladder
from learning.transcripts.artifacts import install, recommend, review_recommendation
from learning.transcripts.ingest import default_seat, ingest
from learning.transcripts.models import Recommendation, Shard, TranscriptEpisode
from learning.transcripts.report import summary_lines
from learning.transcripts.telemetry import render_uses

if TYPE_CHECKING:
    from crewlet.models import Seat

FIXTURES = Path(settings.BASE_DIR) / "fixtures" / "transcripts" / "-home-dev-acme-api"
CLAUDE_MD = "# Acme API\n\n## Rules\n\n- Use `ruff` for linting.\n\n## Layout\n\nDjango apps live under apps/.\n"
SETTINGS = {"hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "ruff check ."}]}]}}


def _workspace() -> tuple[Path, Path]:
    base = Path(settings.VAR_DIR) / "demo" / "transcripts"
    shutil.rmtree(base, ignore_errors=True)
    sessions, repo = base / "sessions", base / "repo"
    sessions.mkdir(parents=True)
    (repo / ".claude" / "skills" / "release").mkdir(parents=True)
    (repo / "CLAUDE.md").write_text(CLAUDE_MD)
    (repo / ".claude" / "settings.json").write_text(json.dumps(SETTINGS, indent=2) + "\n")
    (repo / ".claude" / "skills" / "release" / "SKILL.md").write_text("---\nname: release\ndescription: Cut a release\n---\n\nTag, then push.\n")
    return sessions, repo


def _embedder_or_hashing(ctx) -> schema.Config | None:
    """The configured (real) embedder; if it cannot be built here, this step runs on the hashing one and says so."""
    from core.providers.embeddings import get_embedder

    try:
        embedder = get_embedder()
        ctx.line(f"embedder: {embedder.model}" if embedder else "embedder: none configured")
        return None
    except (ImproperlyConfigured, ImportError) as exc:
        previous = config.current()
        ctx.line(f"embedder: the configured one is unavailable here ({exc}); this step uses hashing-256")
        spec = schema.EmbeddingSpec(kind="hashing", model="hashing-256", dimensions=256)
        config.use(dataclasses.replace(previous, providers=dataclasses.replace(previous.providers, embeddings=spec)))
        return previous


def _run(ctx, seat: Seat, repo, paths, title):
    ctx.line(f"\n-- {title}")
    summary = ingest(paths=[str(p) for p in paths], seat=seat, repo=str(repo))
    for line in summary_lines(summary):
        ctx.line("   " + line)
    return summary


def _aux_calls() -> int:
    return Event.objects.filter(name="auxiliary_spend").count()


def _phase_one(ctx, seat: Seat, sessions, repo):
    shutil.copy(FIXTURES / "sess-a.jsonl", sessions / "sess-a.jsonl")
    _run(ctx, seat, repo, [sessions / "sess-a.jsonl"], "session A: the lesson said twice in one session, a secret, a malformed line")
    secret = TranscriptEpisode.objects.filter(ask__contains="[REDACTED:").first()
    if secret:
        ctx.line(f"   stored ask, scrubbed: {secret.ask!r}")
    again = ingest(paths=[str(sessions / "sess-a.jsonl")], seat=seat, repo=str(repo))
    ctx.line(f"\n-- session A again: {again.episodes} new episodes, {again.bytes_read} new bytes (the watermark holds)")
    lines = (FIXTURES / "sess-b.jsonl").read_text().splitlines(keepends=True)
    (sessions / "sess-b.jsonl").write_text("".join(lines[: len(lines) // 2]))
    half = ingest(paths=[str(sessions / "sess-b.jsonl")], seat=seat, repo=str(repo))
    ctx.line(f"-- session B, first half: {half.bytes_read:,} bytes, {half.episodes} episode(s)")
    (sessions / "sess-b.jsonl").write_text("".join(lines))
    _run(ctx, seat, repo, [sessions / "sess-b.jsonl"], "session B grew: resumed from the watermark")


def _lead_decides(ctx, seat: Seat):
    staging = Shard.objects.filter(text__startswith="The staging database", status__in=Shard.OPEN).first()
    if staging:
        answer = ladder.reject_memory(shard=staging, by=Shard.BY_PERSON, actor="lead")
        ctx.line(f"\n-- the lead rejects #{staging.pk} (no judge): {answer['status']}")


def _publish_leftovers(ctx):
    for shard in Shard.objects.filter(status__in=(Shard.PENDING, Shard.REVIEW), text__icontains="migration guard"):
        answer = ladder.publish_memory(shard=shard, stage="operator", submitted_by="lead")
        ctx.line(f"-- the lead submits #{shard.pk} to the judge: {answer['reason']}")


def _boundary(ctx, seat: Seat, repo):
    ctx.line("\n-- the human boundary")
    for pk in Recommendation.objects.filter(repo_root=str(repo)).order_by("pk").values_list("pk", flat=True):
        # proposals follow the repository: re-render against what the previous approval changed (no model call)
        recommend(seat=seat, repo_root=str(repo), warnings=[])
        rec = Recommendation.objects.get(pk=pk)
        ctx.line(f"   #{rec.pk} {rec.tier} → {rec.target_path} ({rec.get_mode_display()})")
        for line in rec.diff.splitlines()[:14]:
            ctx.line("      " + line)
        before = (repo / rec.target_path).read_bytes() if (repo / rec.target_path).exists() else None
        answer = review_recommendation(recommendation=rec, approve=True, actor="lead")
        after = (repo / rec.target_path).read_bytes() if (repo / rec.target_path).exists() else None
        ctx.line(f"      approved: wrote {answer['wrote_bytes']} bytes; file unchanged: {before == after}")
        if answer["installable"]:
            done = install(recommendation=rec, actor="lead")
            ctx.line(f"      installed additively: wrote {done['wrote_bytes']} bytes to {rec.target_path}")
            try:
                install(recommendation=rec)
            except Conflict as exc:
                ctx.line(f"      a second install is refused: {exc}")
        elif rec.target_path == "CLAUDE.md":
            (repo / rec.target_path).write_text(rec.contents)  # the person applies the returned contents by hand
            ctx.line("      (the lead applies the returned contents to CLAUDE.md by hand)")


def _later_session(sessions: Path) -> Path:
    start = timezone.now() + timedelta(seconds=5)
    records, n = [], 0

    def add(type_, **extra):
        nonlocal n
        n += 1
        ts = (start + timedelta(seconds=n)).isoformat().replace("+00:00", "Z")
        records.append(json.dumps({"type": type_, "sessionId": "sess-later", "uuid": f"later-{n}", "timestamp": ts, "cwd": "/home/dev/acme-api", **extra}))

    def call(tid, name, **args):
        add("assistant", message={"role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": name, "input": args}]})
        add("user", message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": "ok"}]}, toolUseResult={})

    add("user", message={"role": "user", "content": "Add a refunds table."})
    call("l1", "Skill", skill="two-engine-check")
    call("l2", "Bash", command="make test")
    call("l3", "Bash", command="git commit -am 'refunds'")
    add("assistant", message={"role": "assistant", "content": [{"type": "tool_use", "id": "l4", "name": "Bash", "input": {"command": "git push"}}]})
    add("user", message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "l4", "is_error": True,
        "content": " ! [rejected]        main -> main (non-fast-forward)"}]}, toolUseResult={})
    call("l5", "Bash", command="git pull --rebase && git push")
    add("system", subtype="stop_hook_summary", hookInfos=[{"command": ".claude/hooks/migration-guard.sh"}])
    add("user", message={"role": "user", "content": "No. Migration guard: run `python manage.py makemigrations --check` before every commit."})
    path = sessions / "sess-later.jsonl"
    path.write_text("\n".join(records) + "\n")
    return path


def run(ctx):
    ctx.heading("Transcripts: harness sessions into vetted lessons")
    previous = _embedder_or_hashing(ctx)
    try:
        seat = default_seat()
        sessions, repo = _workspace()
        ctx.line(f"seat: {seat.handle}   repository: {repo}")
        _phase_one(ctx, seat, sessions, repo)
        _lead_decides(ctx, seat)
        for name in ("sess-c", "sess-d"):
            shutil.copy(FIXTURES / f"{name}.jsonl", sessions / f"{name}.jsonl")
        _run(ctx, seat, repo, [sessions / "sess-c.jsonl", sessions / "sess-d.jsonl"], "sessions C and D")
        _publish_leftovers(ctx)
        _run(ctx, seat, repo, [], "classify and draft what was just published")
        calls = _aux_calls()
        ingest(paths=[str(sessions)], seat=seat, repo=str(repo))
        ctx.line(f"-- re-running the whole loop: {_aux_calls() - calls} model call(s) (drafts are keyed on the lesson text)")
        _boundary(ctx, seat, repo)
        summary = _run(ctx, seat, repo, [_later_session(sessions)], "a later session, after the artifacts landed")
        ctx.line("   uses by artifact (a fact names no command, so its uses cannot be counted and read unknown):")
        for row in summary.telemetry.artifacts:
            ctx.line(f"      {row['tier']:<6} {row['path']:<45} uses {render_uses(row['uses'])}")
    finally:
        if previous is not None:
            config.use(previous)
    ctx.notes["transcripts_repo"] = str(repo)
