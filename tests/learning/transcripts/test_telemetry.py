"""Telemetry: uses NULL where unobservable, an observed count (0 included) where it is; retirement; misses."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from core.models import Event
from learning.transcripts import telemetry
from learning.transcripts.artifacts import normalise_scope
from learning.transcripts.models import Recommendation, Shard, TranscriptSession, TranscriptSource
from tests.learning.transcripts.conftest import make, vec

LANDED = timezone.now() - timedelta(days=10)


def _lesson(seat, text, tier, scope, axis=1):
    return make(seat, text, "s0", vec(0.5, axis=axis), status=Shard.PUBLISHED, tier=tier, scope=scope,
                scope_key=normalise_scope(scope), published_at=LANDED)


def _landed(seat, tier, path, lesson, name=""):
    rec = Recommendation.objects.create(seat=seat, tier=tier, mode=Recommendation.CREATE, scope=lesson.scope,
                                        scope_key=lesson.scope_key, target_path=path, contents="x", landed_at=LANDED)
    rec.lessons.add(lesson)
    return rec


def _later_session(seat, n, observations, days_after=1):
    source, _ = TranscriptSource.objects.get_or_create(adapter="claude-code", path="~/later.jsonl", defaults={"seat": seat})
    return TranscriptSession.objects.create(seat=seat, source=source, session_id=f"later-{n}",
                                            started_at=LANDED + timedelta(days=days_after), observations=observations)


def test_a_fact_has_uses_null_rendered_unknown(seat):
    rec = _landed(seat, "fact", "CLAUDE.md", _lesson(seat, "The orders service listens on port 8042.", "fact", "orders port"))
    _later_session(seat, 1, {"commands": {"make test": 3}})
    report = telemetry.refresh(company_id=seat.company_id)
    rec.refresh_from_db()
    assert rec.uses is None and rec.uses_display == "unknown" and telemetry.render_uses(rec.uses) == "unknown"
    assert report.artifacts[0]["uses"] is None


def test_an_observable_rule_nobody_hit_is_a_real_zero(seat):
    rec = _landed(seat, "rule", "CLAUDE.md", _lesson(seat, "Tests run with `make test`, never bare pytest.", "rule", "make test"))
    _later_session(seat, 1, {"commands": {"pytest": 2}})
    telemetry.refresh(company_id=seat.company_id)
    rec.refresh_from_db()
    assert rec.uses == 0 and rec.uses_display == "0"


def test_a_rule_naming_no_command_cannot_be_observed(seat):
    rec = _landed(seat, "rule", "CLAUDE.md", _lesson(seat, "Never rename a public API field.", "rule", "api fields"))
    _later_session(seat, 1, {"commands": {"pytest": 2}})
    telemetry.refresh(company_id=seat.company_id)
    rec.refresh_from_db()
    assert rec.uses is None


def test_uses_are_counted_from_later_transcripts_only(seat):
    skill = _landed(seat, "skill", ".claude/skills/two-engine-check/SKILL.md",
                    _lesson(seat, "Two-engine check: both engines.", "skill", "Two-engine check"))
    hook = _landed(seat, "hook", ".claude/hooks/migration-guard.sh",
                   _lesson(seat, "Migration guard: run it before every commit.", "hook", "migration guard", axis=2))
    rule = _landed(seat, "rule", "CLAUDE.md", _lesson(seat, "Tests run with `make test`, never bare pytest.", "rule", "make test", axis=3))
    _later_session(seat, 1, {"skills": {"two-engine-check": 1}, "slash_commands": {"two-engine-check": 1},
                             "hooks": {".claude/hooks/migration-guard.sh": 4}, "commands": {"make test": 2, "make test-sqlite": 1}})
    _later_session(seat, 2, {"skills": {"two-engine-check": 9}, "hooks": {".claude/hooks/migration-guard.sh": 9}}, days_after=-20)
    telemetry.refresh(company_id=seat.company_id)
    for rec in (skill, hook, rule):
        rec.refresh_from_db()
    assert (skill.uses, hook.uses, rule.uses) == (2, 4, 3)
    assert skill.later_sessions == 1


def test_an_unused_observable_artifact_is_proposed_for_retirement(seat):
    rec = _landed(seat, "skill", ".claude/skills/old/SKILL.md", _lesson(seat, "Old: a procedure.", "skill", "old"))
    for n in range(telemetry.RETIRE_AFTER_SESSIONS - 1):
        _later_session(seat, n, {"skills": {"other": 1}})
    assert telemetry.refresh(company_id=seat.company_id).retirements == []
    _later_session(seat, 99, {})
    report = telemetry.refresh(company_id=seat.company_id)
    assert report.retirements == [{"id": rec.pk, "path": ".claude/skills/old/SKILL.md", "later_sessions": telemetry.RETIRE_AFTER_SESSIONS}]
    assert Event.objects.filter(name="artifact_retirement_proposed").count() == 1
    telemetry.refresh(company_id=seat.company_id)
    assert Event.objects.filter(name="artifact_retirement_proposed").count() == 1


def test_an_unobservable_artifact_is_never_retired_for_being_unused(seat):
    _landed(seat, "fact", "CLAUDE.md", _lesson(seat, "The orders service listens on port 8042.", "fact", "port"))
    for n in range(telemetry.RETIRE_AFTER_SESSIONS + 2):
        _later_session(seat, n, {})
    assert telemetry.refresh(company_id=seat.company_id).retirements == []


def test_a_lesson_the_next_sessions_never_reached_is_a_miss(seat):
    lesson = _lesson(seat, "Tests run with `make test`, never bare pytest.", "rule", "make test")
    lesson.embedding = vec(1.0)
    lesson.save()
    _later_session(seat, 1, {})
    make(seat, "Tests run with make test.", "later-1", vec(0.99), status=Shard.REJECTED, rejected_by=Shard.BY_LADDER)
    (row,) = telemetry.refresh(company_id=seat.company_id).lessons
    assert row["reach"] == telemetry.MISSED
    assert Event.objects.filter(name="lesson_missed", payload__shard_id=lesson.pk).count() == 1


def test_a_lesson_whose_artifact_was_used_was_reached(seat):
    lesson = _lesson(seat, "Two-engine check: both engines.", "skill", "Two-engine check")
    _landed(seat, "skill", ".claude/skills/two-engine-check/SKILL.md", lesson)
    _later_session(seat, 1, {"skills": {"two-engine-check": 1}})
    (row,) = telemetry.refresh(company_id=seat.company_id).lessons
    assert row["reach"] == telemetry.REACHED


def test_a_lesson_with_no_later_session_is_unknown_not_a_miss(seat):
    _lesson(seat, "The orders service listens on port 8042.", "fact", "port")
    (row,) = telemetry.refresh(company_id=seat.company_id).lessons
    assert row["reach"] == telemetry.UNKNOWN and row["later_sessions"] == 0
