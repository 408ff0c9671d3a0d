"""Telemetry after artifacts land: observed uses, retirement proposals, and lessons that missed.

``uses`` is an observed count where the tier's use shows in later transcripts (a hook firing, a
skill loaded, a subagent used, the command a rule or an allowlist entry names being run) and NULL
where it cannot be observed (a fact, an update, a deletion, a rule naming no command). NULL renders
as "unknown", never as 0: a 0 is a real result and can retire an artifact; unknown never does.

A published lesson is *reached* when a later session used its artifact, *missed* when a later
session made the same mistake again (a new candidate resembling it) or used its observable
artifact zero times, and *unknown* otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.utils import timezone

from core import events
from learning.transcripts.artifacts.draft import commands_in, slug
from learning.transcripts.events import ArtifactRetirementProposed, LessonMissed
from learning.transcripts.models import Recommendation, Shard, TranscriptSession

OBSERVABLE = ("hook", "skill", "agent", "rule", "allowlist")
RETIRE_AFTER_SESSIONS = 5  # later sessions with zero observed uses before retirement is proposed
REACHED, MISSED, UNKNOWN = "reached", "missed", "unknown"


def render_uses(uses: int | None) -> str:
    return "unknown" if uses is None else str(uses)


def _name(rec: Recommendation) -> str:
    if rec.draft is not None:
        return rec.draft.name
    parts = rec.target_path.rstrip("/").split("/")
    return slug(parts[-2] if parts[-1] == "SKILL.md" else parts[-1].rsplit(".", 1)[0])


def _count(sessions, family: str, match) -> int:
    return sum(n for s in sessions for name, n in (s.observations.get(family) or {}).items() if match(name))


def uses_for(rec: Recommendation, sessions) -> int | None:
    """Observed uses of one artifact across ``sessions``; None where the tier's use cannot be observed."""
    if rec.tier not in OBSERVABLE:
        return None
    name = _name(rec)
    if rec.tier == "skill":
        return _count(sessions, "skills", lambda n: slug(n) == name) + _count(sessions, "slash_commands", lambda n: slug(n) == name)
    if rec.tier == "agent":
        return _count(sessions, "agents", lambda n: slug(n) == name)
    if rec.tier == "hook":
        script = rec.target_path
        return _count(sessions, "hooks", lambda n: script in n or name in n)
    commands = commands_in([s.text for s in rec.lessons.all()])
    if not commands:
        return None  # a rule that names no command leaves no trace to count
    return _count(sessions, "commands", lambda n: any(n.strip().startswith(c) for c in commands))


@dataclass
class TelemetryReport:
    artifacts: list = field(default_factory=list)  # dicts: id, tier, path, uses (None = unknown), later_sessions
    retirements: list = field(default_factory=list)
    lessons: list = field(default_factory=list)  # dicts: shard_id, text, reach, later_sessions


def _later(company_id: int, after) -> list[TranscriptSession]:
    return list(TranscriptSession.objects.filter(seat__company_id=company_id, started_at__gt=after))


def refresh(*, company_id: int) -> TelemetryReport:
    """Recount every landed artifact and every published lesson of the company."""
    report = TelemetryReport()
    for rec in Recommendation.objects.filter(seat__company_id=company_id, landed_at__isnull=False).select_related("draft", "seat"):
        sessions = _later(company_id, rec.landed_at)
        rec.uses, rec.later_sessions = uses_for(rec, sessions), len(sessions)
        if rec.uses == 0 and rec.later_sessions >= RETIRE_AFTER_SESSIONS and rec.retirement_proposed_at is None:
            rec.retirement_proposed_at = timezone.now()
            events.publish(ArtifactRetirementProposed(recommendation_id=rec.pk, later_sessions=rec.later_sessions), seat=rec.seat)
        rec.save(update_fields=["uses", "later_sessions", "retirement_proposed_at", "updated_at"])
        report.artifacts.append({"id": rec.pk, "tier": rec.tier, "path": rec.target_path, "uses": rec.uses, "later_sessions": rec.later_sessions})
        if rec.retirement_proposed_at:
            report.retirements.append({"id": rec.pk, "path": rec.target_path, "later_sessions": rec.later_sessions})
    for shard in Shard.objects.filter(seat__company_id=company_id, status=Shard.PUBLISHED).select_related("seat"):
        report.lessons.append(_reach(shard, company_id))
    return report


def _reach(shard: Shard, company_id: int) -> dict:
    from learning.transcripts.ladder import knobs, similar

    sessions = _later(company_id, shard.published_at) if shard.published_at else []
    later_ids = {s.session_id for s in sessions} - set(shard.evidence.get("sources") or [shard.session_id])
    artifacts = [r for r in shard.recommendations.all() if r.landed_at is not None]
    reach = UNKNOWN
    if any(r.uses for r in artifacts):
        reach = REACHED
    elif later_ids:
        repeats = Shard.objects.filter(seat__company_id=company_id, session_id__in=later_ids)
        if similar(shard, repeats, knobs().corroboration_similarity) or any(r.uses == 0 and r.later_sessions for r in artifacts):
            reach = MISSED
    if reach == MISSED and shard.evidence.get("reach") != MISSED:
        events.publish(LessonMissed(shard_id=shard.pk, later_sessions=len(later_ids)), seat=shard.seat)
    if shard.evidence.get("reach") != reach:
        shard.evidence = {**shard.evidence, "reach": reach}
        shard.save(update_fields=["evidence"])
    return {"shard_id": shard.pk, "text": shard.text, "reach": reach, "later_sessions": len(later_ids)}
