"""Classification, inventory, drafting, and the human boundary."""

from __future__ import annotations

import json
import os

import pytest

from core.providers.llm.scripted import ScriptedProvider
from crewlet.config import schema
from crewlet.errors import Conflict
from learning.purposes import artifact_classify, artifact_draft
from learning.transcripts.artifacts import (
    classify,
    install,
    inventory,
    normalise_scope,
    recommend,
    review_recommendation,
)
from learning.transcripts.models import Draft, Recommendation, Shard
from tests.learning.transcripts.conftest import make, vec

GUARD_1 = "Migration guard: run `python manage.py makemigrations --check` before every commit."
GUARD_2 = "The migration guards: run `python manage.py makemigrations --check` after every model edit."
SKILL = "Two-engine check: a change is done only when the suite passes on SQLite and on PostgreSQL."
RULE = "Tests run with `make test`, never bare pytest."


def published(seat, text, session="s1", axis=1, **extra):
    return make(seat, text, session, vec(0.5, axis=axis), status=Shard.PUBLISHED, **extra)


def _calls(purpose):
    return [c for c in ScriptedProvider.calls if c["purpose"] == purpose]


@pytest.mark.parametrize("scope,key", [
    ("migration guard", "migration guard"), ("the migration guards", "migration guard"),
    ("The Migration-Guards!", "migration guard"), ("our test policies", "test policy"), ("process", "process"),
])
def test_scope_normalisation(scope, key):
    assert normalise_scope(scope) == key


def test_near_identical_scopes_make_one_recommendation(scripted_seat, tmp_path):
    a, b = published(scripted_seat, GUARD_1, axis=1), published(scripted_seat, GUARD_2, "s2", axis=2)
    ScriptedProvider.queue(artifact_classify.NAME, json.dumps({"items": [
        {"id": a.pk, "tier": "hook", "scope": "migration guard"}, {"id": b.pk, "tier": "hook", "scope": "the migration guards"},
    ]}))
    warnings = []
    assert classify(seat=scripted_seat, shards=[a, b], warnings=warnings) == 2
    report = recommend(seat=scripted_seat, repo_root=str(tmp_path), warnings=warnings)
    (rec,) = report.recommendations
    assert rec.tier == "hook" and rec.mode == Recommendation.CREATE
    assert rec.target_path == ".claude/hooks/migration-guard.sh"
    assert set(rec.lessons.values_list("pk", flat=True)) == {a.pk, b.pk}
    assert "python manage.py makemigrations --check" in rec.contents and "exit 2" in rec.contents


def test_classification_runs_in_batches_of_the_knob(scripted_seat, serve_config):
    serve_config(transcripts=schema.Transcripts(classify_batch_size=2))
    shards = [published(scripted_seat, f"{RULE} Case {i}.", f"s{i}", axis=1 + i % 7) for i in range(5)]
    classify(seat=scripted_seat, shards=shards, warnings=[])
    assert [len(c["inputs"].lessons) for c in _calls(artifact_classify.NAME)] == [2, 2, 1]
    classify(seat=scripted_seat, shards=[Shard.objects.get(pk=s.pk) for s in shards], warnings=[])
    assert len(_calls(artifact_classify.NAME)) == 3  # classified once


@pytest.mark.parametrize("text,tier", [
    (RULE, "rule"), (GUARD_1, "hook"), (SKILL, "skill"),
    ("`make lint` is safe to run without asking.", "allowlist"),
    ("Delegate schema reviews to the reviewer agent.", "agent"),
    ("The release script now uses `uv build`.", "update"),
    ("The `legacy-deploy` skill is obsolete.", "delete"),
    ("The orders service listens on port 8042.", "fact"),
    # what a failed call said and what worked, however its fix is worded: a fact, never a skill named "edit-path"
    ("`Edit <path>` fails: String to replace not found in file. Fix: `Read <path>` first, then the same call worked.",
     "fact"),
    ("`git push` fails: fatal: The current branch <name> has no upstream branch. Fix: `git push --set-upstream <args>` "
     "worked instead.", "fact"),
])
def test_offline_classifier_tiers(scripted_seat, text, tier):
    shard = published(scripted_seat, text)
    classify(seat=scripted_seat, shards=[shard], warnings=[])
    shard.refresh_from_db()
    assert shard.tier == tier


@pytest.mark.parametrize("text,scope", [
    # a rule's wording is not its topic, and a contraction is one word
    ("Don't run the whole suite; run only the tests of the module you changed.", "run whole suite"),
    ("Never force-push to main.", "force-push main"),
    ("Migration guard: run `makemigrations --check` before every commit.", "Migration guard"),
    ("The orders service listens on port 8042.", "orders service listens"),
])
def test_offline_classifier_scopes_name_what_the_lesson_is_about(scripted_seat, text, scope):
    shard = published(scripted_seat, text)
    classify(seat=scripted_seat, shards=[shard], warnings=[])
    shard.refresh_from_db()
    assert shard.scope == scope


def test_an_unparseable_classification_is_a_warning_and_retried(scripted_seat):
    shard = published(scripted_seat, RULE)
    ScriptedProvider.queue(artifact_classify.NAME, '{"items": [{"id": 1, "tier": "ru')
    warnings = []
    assert classify(seat=scripted_seat, shards=[shard], warnings=warnings) == 0
    assert "classification of 1 lesson(s) failed" in warnings[0]
    assert classify(seat=scripted_seat, shards=[shard], warnings=[]) == 1


def test_one_unknown_tier_drops_only_its_item_and_the_batch_is_classified(scripted_seat):
    good, odd = published(scripted_seat, RULE), published(scripted_seat, RULE + " Again.")
    ScriptedProvider.queue(artifact_classify.NAME, json.dumps({"items": [
        {"id": str(good.pk), "tier": "Rule", "scope": "linting"}, {"id": odd.pk, "tier": "poem", "scope": "x"},
    ]}))
    warnings = []

    assert classify(seat=scripted_seat, shards=[good, odd], warnings=warnings) == 1

    good.refresh_from_db()
    odd.refresh_from_db()
    assert (good.tier, odd.tier) == ("rule", "")
    assert warnings == [f"shard {odd.pk}: the classifier gave no tier; retried next run"]


def _repo(tmp_path):
    (tmp_path / ".claude" / "skills" / "release").mkdir(parents=True)
    (tmp_path / ".claude" / "agents").mkdir()
    (tmp_path / "CLAUDE.md").write_text("# Acme\n\n## Rules\n\n- Use `ruff` for linting.\n\n## Layout\n\nApps live in apps/.\n")
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "ruff check ."}]}]},
        "permissions": {"allow": ["Bash(make test:*)"]},
    }))
    (tmp_path / ".claude" / "skills" / "release" / "SKILL.md").write_text("---\nname: release\ndescription: Cut a release\n---\n\nTag, then push.\n")
    (tmp_path / ".claude" / "agents" / "reviewer.md").write_text("---\nname: reviewer\ndescription: Reviews diffs\n---\n\nReview.\n")
    return tmp_path


def test_inventory_reads_the_artifacts_already_there(tmp_path):
    items = {(i.kind, i.name) for i in inventory(str(_repo(tmp_path)))}
    assert items == {("line", "Use `ruff` for linting."), ("hook", "ruff check ."), ("allowlist", "Bash(make test:*)"),
                     ("skill", "release"), ("agent", "reviewer")}


def test_a_broken_settings_file_is_a_warning_not_a_crash(tmp_path):
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text("{not json")
    warnings = []
    assert inventory(str(tmp_path), warnings) == [] and "not valid JSON" in warnings[0]


def _classified(seat, text, tier, scope, session="s1", axis=1):
    return published(seat, text, session, axis=axis, tier=tier, scope=scope, scope_key=normalise_scope(scope),
                     classified_at="2025-01-01T00:00:00Z")


def test_a_lesson_an_existing_artifact_states_is_covered_not_copied(seat, tmp_path):
    _classified(seat, "Use `ruff` for linting.", "rule", "linting")
    report = recommend(seat=seat, repo_root=str(_repo(tmp_path)), warnings=[])
    assert report.recommendations == [] and report.covered == [("linting", "CLAUDE.md")]


def test_a_lesson_naming_an_existing_skill_updates_it(seat, tmp_path):
    _classified(seat, "Release: run the changelog check first, then tag.", "skill", "release")
    (rec,) = recommend(seat=seat, repo_root=str(_repo(tmp_path)), warnings=[]).recommendations
    assert rec.mode == Recommendation.EDIT and rec.target_path == ".claude/skills/release/SKILL.md"
    assert rec.resolves == ".claude/skills/release/SKILL.md"
    assert rec.contents.startswith("---\nname: release") and "changelog check" in rec.contents


def test_drafting_renders_the_real_file_and_a_diff(seat, tmp_path):
    _classified(seat, RULE, "rule", "make test")
    _classified(seat, SKILL, "skill", "Two-engine check", "s2", axis=2)
    repo = _repo(tmp_path)
    recs = {r.tier: r for r in recommend(seat=seat, repo_root=str(repo), warnings=[]).recommendations}
    rule, skill = recs["rule"], recs["skill"]
    assert rule.mode == Recommendation.EDIT and rule.target_path == "CLAUDE.md"
    assert rule.contents == "# Acme\n\n## Rules\n\n- Use `ruff` for linting.\n- " + RULE + "\n\n## Layout\n\nApps live in apps/.\n"
    assert "+- " + RULE in rule.diff and rule.diff.startswith("--- a/CLAUDE.md")
    assert skill.mode == Recommendation.CREATE and skill.target_path == ".claude/skills/two-engine-check/SKILL.md"
    assert skill.contents.startswith("---\nname: two-engine-check\ndescription: " + SKILL + "\n---\n")
    assert skill.diff.startswith("--- /dev/null")


def test_rerunning_the_loop_makes_no_new_draft_call(scripted_seat, tmp_path):
    _classified(scripted_seat, SKILL, "skill", "Two-engine check")
    recommend(seat=scripted_seat, repo_root=str(tmp_path), warnings=[])
    assert len(_calls(artifact_draft.NAME)) == 1
    recommend(seat=scripted_seat, repo_root=str(tmp_path), warnings=[])
    recommend(seat=scripted_seat, repo_root=str(tmp_path / "elsewhere"), warnings=[])
    assert len(_calls(artifact_draft.NAME)) == 1 and Draft.objects.count() == 1


def test_a_changed_lesson_set_is_drafted_anew(scripted_seat, tmp_path):
    _classified(scripted_seat, GUARD_1, "hook", "migration guard")
    recommend(seat=scripted_seat, repo_root=str(tmp_path), warnings=[])
    _classified(scripted_seat, GUARD_2, "hook", "the migration guards", "s2", axis=2)
    recommend(seat=scripted_seat, repo_root=str(tmp_path), warnings=[])
    assert len(_calls(artifact_draft.NAME)) == 2


def _snapshot(root):
    return {os.path.join(d, f): open(os.path.join(d, f), "rb").read() for d, _s, fs in os.walk(root) for f in fs}


def test_approving_an_edit_of_a_shared_file_writes_zero_bytes(seat, tmp_path):
    repo = _repo(tmp_path)
    _classified(seat, RULE, "rule", "make test")
    (rec,) = recommend(seat=seat, repo_root=str(repo), warnings=[]).recommendations
    before = _snapshot(repo)
    answer = review_recommendation(recommendation=rec, approve=True, actor="lead")
    assert answer["wrote_bytes"] == 0 and answer["status"] == Recommendation.APPROVED
    assert answer["contents"] == rec.contents and answer["diff"] == rec.diff and answer["installable"] is False
    assert _snapshot(repo) == before
    with pytest.raises(Conflict):
        install(recommendation=rec)
    assert _snapshot(repo) == before


def test_approving_a_new_file_also_writes_nothing_until_installed(seat, tmp_path):
    _classified(seat, SKILL, "skill", "Two-engine check")
    (rec,) = recommend(seat=seat, repo_root=str(tmp_path), warnings=[]).recommendations
    answer = review_recommendation(recommendation=rec, approve=True)
    assert answer["wrote_bytes"] == 0 and answer["installable"] is True
    assert not (tmp_path / ".claude").exists()
    installed = install(recommendation=rec)
    path = tmp_path / ".claude" / "skills" / "two-engine-check" / "SKILL.md"
    assert installed["wrote_bytes"] == len(rec.contents.encode()) and path.read_text() == rec.contents
    rec.refresh_from_db()
    assert rec.status == Recommendation.INSTALLED and rec.landed_at is not None


def test_install_refuses_to_overwrite_a_file_that_appeared_since_the_draft(seat, tmp_path):
    _classified(seat, SKILL, "skill", "Two-engine check")
    (rec,) = recommend(seat=seat, repo_root=str(tmp_path), warnings=[]).recommendations
    review_recommendation(recommendation=rec, approve=True)
    path = tmp_path / ".claude" / "skills" / "two-engine-check" / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text("mine\n")
    with pytest.raises(Conflict, match="never overwrites"):
        install(recommendation=rec)
    assert path.read_text() == "mine\n"
    rec.refresh_from_db()
    assert rec.status == Recommendation.APPROVED


def test_install_refuses_an_unapproved_recommendation(seat, tmp_path):
    _classified(seat, SKILL, "skill", "Two-engine check")
    (rec,) = recommend(seat=seat, repo_root=str(tmp_path), warnings=[]).recommendations
    with pytest.raises(Conflict, match="only an approved"):
        install(recommendation=rec)
    assert not (tmp_path / ".claude").exists()


def test_an_installed_hook_runs_its_guard_once_and_says_which_failed(seat, tmp_path):
    """Run as Claude Code runs a PreToolUse hook: the tool call on stdin, blocked (exit 2) with the reason on stderr.
    The reason names the command in backticks: written in double quotes, bash ran it a second time to print it."""
    import subprocess

    _classified(seat, "Migration guard: run `./guard.sh $HOME` before every commit.", "hook", "migration guard")
    (rec,) = recommend(seat=seat, repo_root=str(tmp_path), warnings=[]).recommendations
    review_recommendation(recommendation=rec, approve=True)
    install(recommendation=rec)
    guard = tmp_path / "guard.sh"
    guard.write_text('#!/usr/bin/env bash\necho ran >> runs.log\nexit 1\n')
    guard.chmod(0o755)
    hook = tmp_path / ".claude" / "hooks" / "migration-guard.sh"
    call = json.dumps({"tool_name": "Bash", "tool_input": {"command": "git commit -m wip"}})
    done = subprocess.run(["bash", str(hook)], input=call, cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert (tmp_path / "runs.log").read_text() == "ran\n"  # the guard ran once
    assert "migration-guard: `./guard.sh $HOME` failed" in done.stderr  # the reason as written, nothing expanded
    other = json.dumps({"tool_name": "Bash", "tool_input": {"command": "ls"}})
    assert subprocess.run(["bash", str(hook)], input=other, cwd=tmp_path, text=True, timeout=30).returncode == 0


def test_a_hook_installs_an_executable_script_and_returns_its_registration(seat, tmp_path):
    _classified(seat, GUARD_1, "hook", "migration guard")
    (rec,) = recommend(seat=seat, repo_root=str(tmp_path), warnings=[]).recommendations
    review_recommendation(recommendation=rec, approve=True)
    install(recommendation=rec)
    script = tmp_path / ".claude" / "hooks" / "migration-guard.sh"
    assert os.access(script, os.X_OK) and script.read_text().startswith("#!/usr/bin/env bash")
    assert '"command": ".claude/hooks/migration-guard.sh"' in rec.notes
    assert not (tmp_path / ".claude" / "settings.json").exists()
