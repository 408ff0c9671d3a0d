"""Skill reflection on the persistence pass: signal, cooldown, cron exclusion, rails, golden prompt."""

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core import events
from crewlet.config import schema
from learning import skill_body
from learning.events import ReflectionCompleted
from learning.memory import skill_actions, skills
from learning.models import ConversationState, DiaryEntry, SkillVersion, SynthesizedSkill
from learning.purposes import persist_decision
from learning.reflection import reflect_turn
from learning.reflection.turn_context import TurnContext
from learning.reflection.workers import skill_reflector
from tests.learning.reflection.conftest import human

GOLDEN = Path(__file__).parent / "golden" / "persist_decision_without_signal.txt"
FIXED_NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
TEN = [f"tool_{i}" for i in range(10)]
RELEASE = ["jira_get_issue", "git_checkout", "git_create_branch", "run_tests", "jira_transition"]
CORRECTION = "Cut the branch for 4.5. Next time run the migrations check before you create the branch."


def rendered(messages) -> str:
    return "".join(f"=== {m['role']} ===\n{m['content']}\n" for m in messages)


def persist_prompts(scripted):
    return [c["messages"] for c in scripted.calls if c["purpose"] == "persist_decision"]


def state(seat, conversation="chat:C1:thread-1"):
    return ConversationState.objects.filter(seat=seat, conversation_id=conversation).first()


def release_skill(seat, **kw):
    body = skill_body.skill_md(name="cut-release-branch", description="Cut a release branch",
                               body="# Cut release branch\n\n## Steps\n1. Call `git_checkout`.\n2. Call `git_create_branch`.")
    return skills.create(seat=seat, name="cut-release-branch", description="Cut a release branch", body=body,
                         trigger="inline", tool_sequence=RELEASE, **kw)


def reflecting_turn(make_turn, **kw):
    fields = dict(interactions=[human(CORRECTION, handle="priya", name="Priya")], tool_sequence=RELEASE, tools_called=TEN)
    fields.update(kw)
    return make_turn(**fields)


def sr_report(seat):
    return events.rows(ReflectionCompleted, seat=seat).first().payload["workers"]["skill_reflection"]


# --- the signal -------------------------------------------------------------------------------

def test_tool_calls_reaching_min_tool_iterations_set_the_signal(seat, make_turn):
    reflect_turn(make_turn(tools_called=TEN[:9], tool_sequence=TEN[:9]).pk)
    assert state(seat) is None
    ctx = TurnContext.of(make_turn(tools_called=TEN, tool_sequence=TEN[:2]))
    assert skill_reflector.accumulate(ctx) == ["tool_iterations"]
    assert state(seat).reflection_signal is True and state(seat).signal_reason == "tool_iterations"


def test_a_worker_completing_sets_the_signal(seat, make_turn):
    ctx = TurnContext.of(make_turn(worker_completed=True))
    assert skill_reflector.accumulate(ctx) == ["worker_completed"]


def test_the_signal_counts_iterations_when_the_runtime_reports_them(seat, make_turn):
    ten_calls_in_two_rounds = make_turn(tools_called=TEN, tool_sequence=TEN[5:], tool_iterations=2)
    assert skill_reflector.accumulate(TurnContext.of(ten_calls_in_two_rounds)) == []
    ten_rounds = make_turn(tools_called=TEN, tool_sequence=TEN[9:], tool_iterations=10, conversation_id="c-10")
    assert skill_reflector.accumulate(TurnContext.of(ten_rounds)) == ["tool_iterations"]


def test_min_tool_iterations_has_a_per_role_override_and_follows_reloads(seat, make_turn, serve_config):
    serve_config(roles={"swe": schema.RoleSpec(skills={"reflection": {"min_tool_iterations": 3}})})
    assert skill_reflector.accumulate(TurnContext.of(make_turn(tools_called=TEN[:3]))) == ["tool_iterations"]
    serve_config()  # the next revision drops the override: back to the default of ten
    assert skill_reflector.accumulate(TurnContext.of(make_turn(tools_called=TEN[:3], conversation_id="c2"))) == []


def test_the_signal_starts_the_persistence_pass_with_reflection_on(seat, make_turn, scripted):
    skill = release_skill(seat)
    reflect_turn(reflecting_turn(make_turn).pk)
    prompts = persist_prompts(scripted)
    assert len(prompts) == 2  # a read, then the answer with the body shown
    assert skill_reflection_section() in prompts[0][0]["content"]
    assert "Skills you have read:\n### cut-release-branch" in prompts[1][1]["content"]
    skill.refresh_from_db()
    assert skill.version == 2 and "Priya corrected this procedure: Next time run the migrations check" in skill.body
    report = sr_report(seat)
    assert report["status"] == "ran" and report["result"]["actions"][0]["status"] == "applied"
    assert state(seat).reflection_signal is False and state(seat).last_skill_reflection_at is not None


def skill_reflection_section():
    from learning.purposes.skill_reflection import SECTION

    return SECTION


def test_the_signal_can_start_the_pass_with_no_memory_trigger(seat, make_turn, scripted):
    release_skill(seat)
    reflect_turn(reflecting_turn(make_turn, self_persisted=True).pk)
    payload = events.rows(ReflectionCompleted, seat=seat).first().payload
    assert payload["workers"]["persist_decider"]["status"] == "ran"
    assert payload["workers"]["persist_decider"]["result"]["classification"] == "NOOP"
    assert payload["workers"]["skill_reflection"]["status"] == "ran"
    assert not DiaryEntry.objects.exists()  # the turn persisted its own notes: no double write
    assert "already persisted its own notes" in persist_prompts(scripted)[0][1]["content"]


def test_cooldown_holds_the_signal_for_a_later_pass(seat, make_turn, serve_config):
    release_skill(seat)
    reflect_turn(reflecting_turn(make_turn).pk)
    reflect_turn(reflecting_turn(make_turn).pk)
    assert sr_report(seat) == {"status": "skipped", "gate": "cooldown"}
    assert state(seat).reflection_signal is True  # accumulated, waiting for the cooldown
    serve_config(skills=schema.Skills(reflection=schema.SkillsReflection(cooldown_secs=0)))
    reflect_turn(make_turn(tools_called=["x"]).pk)  # no new signal of its own; the held one is consumed
    assert sr_report(seat)["status"] == "ran"


def test_cooldown_is_per_conversation(seat, make_turn):
    reflect_turn(reflecting_turn(make_turn).pk)
    reflect_turn(reflecting_turn(make_turn, conversation_id="chat:C1:thread-2").pk)
    assert sr_report(seat)["status"] == "ran"


def test_cron_and_scheduled_conversations_never_reflect(seat, make_turn, scripted):
    for kind in ("cron", "schedule"):
        turn = reflecting_turn(make_turn, conversation_kind=kind, conversation_id=f"schedule:{kind}", worker_completed=True)
        reflect_turn(turn.pk)
        assert sr_report(seat) == {"status": "skipped", "gate": "scheduled_conversation"}
        assert state(seat, f"schedule:{kind}") is None
    assert all(skill_reflection_section() not in p[0]["content"] for p in persist_prompts(scripted))


def test_reflection_disabled_never_reflects(seat, make_turn, serve_config):
    serve_config(skills=schema.Skills(reflection=schema.SkillsReflection(enabled=False)))
    reflect_turn(reflecting_turn(make_turn).pk)
    assert sr_report(seat) == {"status": "skipped", "gate": "reflection_disabled"}


def test_an_unsettled_turn_leaves_the_signal_for_the_next_persistence_pass(seat, make_turn):
    reflect_turn(reflecting_turn(make_turn, review_outcome="self_iterate").pk)
    assert sr_report(seat) == {"status": "skipped", "gate": "no_persistence_pass"}
    assert state(seat).reflection_signal is True
    reflect_turn(make_turn(tools_called=["x"]).pk)
    assert sr_report(seat)["status"] == "ran"


def test_no_skill_write_is_the_common_case(seat, make_turn):
    skill = release_skill(seat)
    reflect_turn(reflecting_turn(make_turn, interactions=[human("Thanks, looks good.")]).pk)
    skill.refresh_from_db()
    assert skill.version == 1 and sr_report(seat)["result"]["actions"] == []


def test_a_negative_capture_is_never_written(seat, make_turn):
    skill = release_skill(seat)
    text = "Next time don't use run_tests, it doesn't work on staging."
    reflect_turn(reflecting_turn(make_turn, interactions=[human(text)]).pk)
    skill.refresh_from_db()
    assert skill.version == 1


# --- the golden prompt ------------------------------------------------------------------------

def golden_turn(make_turn):
    return make_turn(
        run_id="golden-1", interactions=[human("Thanks! I prefer short bullet-point status updates.")],
        tool_sequence=["jira_search", "mattermost_post_message"], tools_called=["jira_search", "mattermost_post_message"],
    )


def test_a_pass_without_the_signal_renders_the_golden_prompt_byte_for_byte(seat, make_turn, scripted):
    from learning.reflection import dispatcher

    dispatcher.reflect(golden_turn(make_turn), now=FIXED_NOW)
    assert rendered(persist_prompts(scripted)[0]) == GOLDEN.read_text(encoding="utf-8")


def test_with_the_feature_off_the_prompt_is_the_same_golden_bytes(seat, make_turn, scripted, serve_config):
    from learning.reflection import dispatcher

    serve_config(skills=schema.Skills(reflection=schema.SkillsReflection(enabled=False)))
    dispatcher.reflect(golden_turn(make_turn), now=FIXED_NOW)
    assert rendered(persist_prompts(scripted)[0]) == GOLDEN.read_text(encoding="utf-8")


def test_the_section_carries_the_policy():
    section = skill_reflection_section()
    assert "Decide first whether anything from this turn is worth keeping" in section
    assert "No skill write is the common case" in section and "correcting how the agent went about the work" in section
    ladder = ["Patch the skill that governed", "Patch a related skill", "Add a references/ file", "Only then create"]
    assert [section.index(step) for step in ladder] == sorted(section.index(step) for step in ladder)
    assert "never for this incident" in section
    for ban in ("depends on the environment", "a tool does not work", "transient error", "one-off narrative",
                "unresolved failure dressed up as procedure"):
        assert ban in section


# --- the rails --------------------------------------------------------------------------------

@pytest.fixture
def ctx(seat, make_turn):
    return TurnContext.of(reflecting_turn(make_turn))


def test_only_the_seats_own_skills(ctx, other_seat):
    theirs = skills.create(seat=other_seat, name="theirs", description="d", body="b", trigger="inline")
    result = skill_reflector.apply_action(ctx, {"action": "patch", "name": "theirs", "old": "b", "new": "c"}, read={"theirs": "b"})
    assert result["why"] == "not_own_skill"
    theirs.refresh_from_db()
    assert theirs.body == "b"


def test_never_a_pinned_skill(ctx, seat):
    skill = release_skill(seat, now=None)
    skill_actions.pin(skill=skill, actor=seat)
    result = skill_reflector.apply_action(ctx, {"action": "archive", "name": skill.name}, read={skill.name: skill.body})
    assert result["why"] == "pinned"


def test_read_before_write(ctx, seat):
    skill = release_skill(seat)
    action = {"action": "patch", "name": skill.name, "old": "1. Call `git_checkout`.", "new": "1. Call `git_fetch`."}
    assert skill_reflector.apply_action(ctx, action, read={})["why"] == "not_read"
    assert skill_reflector.apply_action(ctx, action, read={skill.name: skill.body})["status"] == "applied"
    skill.refresh_from_db()
    assert "git_fetch" in skill.body and skill.version == 2


def test_a_patch_that_does_not_apply_exactly_once_is_refused(ctx, seat):
    skill = release_skill(seat)
    action = {"action": "patch", "name": skill.name, "old": "Call", "new": "Run"}
    assert skill_reflector.apply_action(ctx, action, read={skill.name: skill.body})["why"] == "patch_did_not_apply"


def test_delete_means_archive_and_the_prior_state_is_versioned(ctx, seat):
    skill = release_skill(seat)
    result = skill_reflector.apply_action(ctx, {"action": "delete", "name": skill.name}, read={skill.name: skill.body})
    assert result["action"] == "archive" and result["status"] == "applied"
    skill.refresh_from_db()
    assert skill.state == SynthesizedSkill.ARCHIVED and SynthesizedSkill.objects.filter(pk=skill.pk).exists()
    assert SkillVersion.objects.get(skill=skill).body == skill.body


def test_a_reference_file_is_added_through_a_versioned_write(ctx, seat):
    skill = release_skill(seat)
    action = {"action": "add_reference", "name": skill.name, "file": "references/checklist.md", "content": "- changelog"}
    assert skill_reflector.apply_action(ctx, action, read={skill.name: skill.body})["status"] == "applied"
    skill.refresh_from_db()
    assert "## References\n### references/checklist.md\n- changelog" in skill.body and skill.version == 2
    bad = {**action, "file": "../etc/passwd"}
    assert skill_reflector.apply_action(ctx, bad, read={skill.name: skill.body})["why"] == "bad_reference"


def test_create_is_agent_origin_guarded_by_name_and_cap(ctx, seat, serve_config):
    action = {"action": "create", "name": "rotate-api-keys", "description": "Rotate keys", "body": "# Rotate\n## Steps\n1. x"}
    result = skill_reflector.apply_action(ctx, action, read={})
    created = SynthesizedSkill.objects.get(name="rotate-api-keys")
    assert result["status"] == "applied" and created.trigger == "agent" and created.body.startswith("---\nname: rotate-api-keys")
    assert skill_reflector.apply_action(ctx, action, read={})["why"] == "name_collision"
    serve_config(learning=schema.Learning(skill_synthesis=schema.SkillSynthesis(max_skills_per_agent=1)))
    other = {**action, "name": "another"}
    assert skill_reflector.apply_action(TurnContext.of(ctx.turn), other, read={})["why"] == "max_skills_per_agent"


def test_an_archived_skill_counts_for_the_cap_on_create(ctx, seat, serve_config):
    kept = skills.create(seat=seat, name="old-procedure", description="d", body="b", trigger="inline")
    skill_actions.archive(skill=kept, actor=seat, reason="retired")
    serve_config(learning=schema.Learning(skill_synthesis=schema.SkillSynthesis(max_skills_per_agent=1)))
    action = {"action": "create", "name": "rotate-api-keys", "description": "Rotate keys", "body": "# Rotate\n## Steps\n1. x"}
    assert skill_reflector.apply_action(TurnContext.of(ctx.turn), action, read={})["why"] == "max_skills_per_agent"
    assert not SynthesizedSkill.objects.filter(name="rotate-api-keys").exists()


def test_a_read_of_a_skill_that_is_not_the_seats_is_refused_and_the_pass_ends(seat, make_turn, scripted, other_seat):
    skills.create(seat=other_seat, name="theirs", description="d", body="secret", trigger="inline")
    scripted.queue("persist_decision", json.dumps({"classification": "NOOP", "skill_actions": [{"action": "read", "name": "theirs"}]}))
    reflect_turn(reflecting_turn(make_turn).pk)
    assert len(persist_prompts(scripted)) == 1
    actions = sr_report(seat)["result"]["actions"]
    assert actions == [{"action": "read", "name": "theirs", "status": "refused", "why": "not_own_skill"}]
    assert all("secret" not in m["content"] for p in persist_prompts(scripted) for m in p)


def test_a_pass_asks_at_most_three_times(seat, make_turn, scripted):
    for name in ("a", "b", "c", "d"):
        skills.create(seat=seat, name=name, description="d", body=f"body {name}", trigger="inline")
    for name in ("a", "b", "c", "d"):
        scripted.queue("persist_decision", json.dumps({"classification": "NOOP", "skill_actions": [{"action": "read", "name": name}]}))
    reflect_turn(reflecting_turn(make_turn).pk)
    assert len(persist_prompts(scripted)) == skill_reflector.MAX_ROUNDS


def test_the_reflection_answer_still_decides_memory(seat, make_turn):
    release_skill(seat)
    turn = reflecting_turn(make_turn, interactions=[human("I prefer release notes in the PR description."), human(CORRECTION)])
    reflect_turn(turn.pk)
    assert DiaryEntry.objects.get().content == "Maya prefers release notes in the PR description."
    assert persist_decision.NAME == "persist_decision"
