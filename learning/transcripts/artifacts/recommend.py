"""Recommendations: one per (tier, normalised scope), resolved against the repository's inventory.

A lesson already stated by an existing artifact is reported as covered; one whose scope names an
existing artifact becomes an update of it; otherwise the tier's file is drafted. A recommendation a
person already decided is not re-rendered; a proposed one follows the repository as it changes.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.db import transaction
from django.utils import timezone

from core.providers.errors import ProviderError
from core.purposes import AnswerUnparseable
from learning.transcripts.artifacts import draft as drafting
from learning.transcripts.artifacts.classify import CREATES, normalise_scope
from learning.transcripts.artifacts.inventory import Artifact, inventory, read_text
from learning.transcripts.models import Recommendation, Shard

if TYPE_CHECKING:
    from crewlet.models import Seat

_WORD = re.compile(r"[a-z0-9]+")
_STOP = {"the", "a", "an", "is", "are", "in", "on", "of", "to", "here", "with", "and", "or", "for", "it", "be", "not"}
COVERED_SHARE = 0.8  # an artifact covering this share of a lesson's words already states it


@dataclass
class Resolution:
    kind: str  # new | update | covered
    artifact: Artifact | None = None


@dataclass
class RecommendReport:
    recommendations: list = field(default_factory=list)
    covered: list = field(default_factory=list)  # (scope, path)
    inventory: list = field(default_factory=list)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def _covers(artifact: Artifact, lesson: str) -> bool:
    words = _words(lesson)
    return bool(words) and len(words & _words(artifact.text)) / len(words) >= COVERED_SHARE


def resolve(tier: str, scope_key: str, lessons: list[str], items: list[Artifact]) -> Resolution:
    """Against what exists: covered, an update of a same-named artifact, or something new."""
    commands = drafting.commands_in(lessons)
    for item in items:
        if item.kind == "hook" and commands and all(c in item.name for c in commands) and tier == "hook":
            return Resolution("covered", item)
        if all(_covers(item, lesson) for lesson in lessons):
            return Resolution("covered", item)
    name = drafting.slug(scope_key)
    for item in items:
        if item.kind in ("skill", "agent", "hook-script") and drafting.slug(item.name) == name:
            return Resolution("update", item)
        if tier in ("update", "delete") and item.kind == "line" and normalise_scope(scope_key) in normalise_scope(item.text):
            return Resolution("update", item)
    return Resolution("new")


def target_for(tier: str, scope_key: str, resolution: Resolution) -> str:
    if resolution.artifact is not None:
        return resolution.artifact.path
    name = drafting.slug(scope_key)
    return {
        "hook": f".claude/hooks/{name}.sh",
        "skill": f".claude/skills/{name}/SKILL.md",
        "agent": f".claude/agents/{name}.md",
        "allowlist": ".claude/settings.json",
    }.get(tier, "CLAUDE.md")


def render(tier: str, draft, existing: str | None, lessons: list[str], resolution: Resolution):
    if resolution.kind == "update":
        assert resolution.artifact is not None  # an update names the artifact it changes
        if tier == "delete":
            return drafting.render_delete(existing, resolution.artifact.line)
        return drafting.render_update(draft, existing, resolution.artifact.line)
    if tier == "skill":
        return drafting.render_skill(draft, existing)
    if tier == "agent":
        return drafting.render_agent(draft, existing)
    if tier == "hook":
        return drafting.render_hook(draft, existing, lessons)
    if tier == "allowlist":
        return drafting.render_allowlist(draft, existing, lessons)
    return drafting.render_section(tier, draft, existing)


def groups(shards: list[Shard]) -> dict[tuple[str, str], list[Shard]]:
    out = defaultdict(list)
    for shard in shards:
        if shard.tier and shard.scope_key:
            out[(shard.tier, shard.scope_key)].append(shard)
    return out


def recommend(*, seat: Seat, repo_root: str, warnings: list[str], stage: str = "background") -> RecommendReport:
    """Draft one recommendation per (tier, scope) of the company's classified published lessons."""
    root = os.path.abspath(repo_root) if repo_root else ""
    report = RecommendReport(inventory=inventory(root, warnings))
    published = list(Shard.objects.filter(seat__company_id=seat.company_id, status=Shard.PUBLISHED).exclude(tier="").order_by("pk"))
    for (tier, scope_key), members in groups(published).items():
        lessons = [s.text for s in members]
        resolution = resolve(tier, scope_key, lessons, report.inventory)
        if resolution.kind == "covered":
            assert resolution.artifact is not None  # covered by a named artifact
            report.covered.append((members[0].scope, resolution.artifact.path))
            mark_landed(root, tier, scope_key)
            continue
        if tier in ("update", "delete") and resolution.kind != "update":
            warnings.append(f"{tier} lesson on {members[0].scope!r}: no existing artifact to {tier}; nothing drafted")
            continue
        try:
            rec = _upsert(seat, root, tier, scope_key, members, resolution, stage)
        except (ProviderError, AnswerUnparseable) as exc:
            warnings.append(f"drafting {tier} for {members[0].scope!r} failed ({exc}); retried next run")
            continue
        report.recommendations.append(rec)
    return report


def mark_landed(root: str, tier: str, scope_key: str) -> None:
    """A recommendation whose lesson now appears in the repository has landed (a person applied it)."""
    Recommendation.objects.filter(repo_root=root, tier=tier, scope_key=scope_key, landed_at__isnull=True).exclude(
        status=Recommendation.REJECTED
    ).update(landed_at=timezone.now())


def _upsert(seat: Seat, root, tier, scope_key, members, resolution, stage) -> Recommendation:
    target = target_for(tier, scope_key, resolution)
    existing = read_text(root, target) if root else None
    lessons = [s.text for s in members]
    draft = drafting.get_draft(seat=seat, tier=tier, scope=members[0].scope, scope_key=scope_key, lessons=lessons, existing=existing or "", stage=stage)
    rendered = render(tier, draft, existing, lessons, resolution)
    mode = Recommendation.CREATE if tier in CREATES and existing is None and resolution.kind == "new" else Recommendation.EDIT
    fields = dict(
        seat=seat, mode=mode, scope=members[0].scope, target_path=target, draft=draft, existing=existing or "",
        contents=rendered.contents, diff=drafting.unified_diff(target, existing, rendered.contents), notes=rendered.notes,
        resolves=resolution.artifact.path if resolution.artifact else "",
    )
    with transaction.atomic():
        rec, created = Recommendation.objects.select_for_update().get_or_create(repo_root=root, tier=tier, scope_key=scope_key, defaults=fields)
        if not created and rec.status == Recommendation.PROPOSED:
            for key, value in fields.items():
                setattr(rec, key, value)
            rec.save()
        rec.lessons.add(*members)
    return rec
