"""Synthesizer, single-turn induction: gates before any model call, drops, collisions, the event."""

import json

from core import events
from crewlet.config import schema
from learning import procedures
from learning.events import ReflectionCompleted, SkillSynthesized
from learning.memory import skills
from learning.models import SynthesizedSkill
from learning.reflection import reflect_turn
from learning.reflection.workers import synthesizer
from tests.learning.reflection.conftest import human

RELEASE = ["jira_get_issue", "git_checkout", "git_create_branch", "run_tests", "jira_transition"]


def release_turn(make_turn, **kw):
    fields = dict(
        conversation_kind="tracker", label="PLAT-1: Cut release", subject_is_label=False,
        interactions=[human("Cut the release branch for 4.2 and run the release checklist.", handle="priya", name="Priya")],
        tool_sequence=RELEASE, tools_called=RELEASE,
    )
    fields.update(kw)
    return make_turn(**fields)


def draft_calls(scripted):
    return [c for c in scripted.calls if c["purpose"] == "skill_draft"]


def test_applicability_settled_and_enough_tools(make_turn, ctx_of):
    assert synthesizer.Synthesizer().applies(ctx_of(release_turn(make_turn))) is None
    assert synthesizer.Synthesizer().applies(ctx_of(release_turn(make_turn, review_outcome="self_iterate"))) == "unsettled"
    assert synthesizer.Synthesizer().applies(ctx_of(release_turn(make_turn, tool_sequence=RELEASE[:4], tools_called=RELEASE[:4]))) \
        == "too_few_tools"


def test_min_tool_calls_counts_distinct_tools_of_the_whole_turn(make_turn, ctx_of):
    five_of_one = ["run_tests"] * 5
    assert synthesizer.Synthesizer().applies(ctx_of(release_turn(make_turn, tool_sequence=five_of_one, tools_called=five_of_one))) \
        == "too_few_tools"
    # tools called in earlier rounds count too, the final round alone had two
    assert synthesizer.Synthesizer().applies(ctx_of(release_turn(make_turn, tool_sequence=RELEASE[-2:], tools_called=RELEASE))) is None


def test_an_archived_skill_counts_for_the_cap_and_the_duplicate_check(seat, make_turn, ctx_of, serve_config):
    archived = skills.create(seat=seat, name="cut-release", description="d", body="b", trigger="inline",
                             tool_sequence=RELEASE)
    SynthesizedSkill.objects.filter(pk=archived.pk).update(state=SynthesizedSkill.ARCHIVED)
    assert synthesizer.Synthesizer().applies(ctx_of(release_turn(make_turn))) == "duplicate_skill"
    serve_config(learning=schema.Learning(skill_synthesis=schema.SkillSynthesis(max_skills_per_agent=1)))
    assert synthesizer.Synthesizer().applies(ctx_of(release_turn(make_turn, tool_sequence=["a", "b", "c", "d", "e"],
                                                   tools_called=["a", "b", "c", "d", "e"]))) == "max_skills_per_agent"


def test_min_tool_calls_follows_the_role_override(seat, make_turn, ctx_of, serve_config):
    serve_config(roles={"swe": schema.RoleSpec(learning={"skill_synthesis": {"min_tool_calls": 3}})})
    assert synthesizer.Synthesizer().applies(ctx_of(release_turn(make_turn, tool_sequence=RELEASE[:3]))) is None


def test_the_per_seat_cap_closes_before_any_model_call(seat, make_turn, scripted, serve_config):
    serve_config(learning=schema.Learning(skill_synthesis=schema.SkillSynthesis(max_skills_per_agent=1)))
    skills.create(seat=seat, name="other", description="d", body="b", trigger="inline", tool_sequence=["x"])
    reflect_turn(release_turn(make_turn).pk)
    assert events.rows(ReflectionCompleted, seat=seat).first().payload["workers"]["synthesizer"]["gate"] == "max_skills_per_agent"
    assert draft_calls(scripted) == []


def test_duplicate_by_tool_set_jaccard_is_order_insensitive(seat, make_turn, ctx_of, scripted):
    skills.create(seat=seat, name="cut-release", description="d", body="b", trigger="inline",
                  tool_sequence=list(reversed(RELEASE)))
    reflect_turn(release_turn(make_turn).pk)
    assert events.rows(ReflectionCompleted, seat=seat).first().payload["workers"]["synthesizer"]["gate"] == "duplicate_skill"
    assert draft_calls(scripted) == []


def test_a_tool_set_below_the_threshold_is_not_a_duplicate(seat, make_turn, ctx_of):
    skills.create(seat=seat, name="cut-release", description="d", body="b", trigger="inline",
                  tool_sequence=RELEASE[:3] + ["other_tool"])
    assert procedures.jaccard(RELEASE, RELEASE[:3] + ["other_tool"]) < 0.8
    assert synthesizer.Synthesizer().applies(ctx_of(release_turn(make_turn))) is None


def test_the_first_run_of_a_shape_is_declined_and_a_repeat_is_drafted(seat, make_turn):
    reflect_turn(release_turn(make_turn).pk)
    assert not SynthesizedSkill.objects.exists()
    turn = release_turn(make_turn, tool_sequence=[RELEASE[0], RELEASE[2], RELEASE[1], RELEASE[3], RELEASE[4]])
    reflect_turn(turn.pk)
    skill = SynthesizedSkill.objects.get()
    assert skill.name == "create-release-branch" and skill.trigger == "inline" and skill.origin_turn_id == turn.run_id
    assert skill.body.startswith("---\nname: create-release-branch\ndescription: ")
    assert "## Steps" in skill.body and "1. Call `jira_get_issue`." in skill.body
    assert skill.tool_sequence == turn.payload["tool_sequence"]
    event = events.rows(SkillSynthesized, seat=seat).first()
    assert event.payload["trigger"] == "inline" and event.turn_id == turn.run_id and event.payload["skill_id"] == skill.pk


def test_a_draft_missing_a_name_summary_or_body_is_rejected(seat, make_turn, scripted):
    from core.models import Event

    for missing in ("name", "summary", "body"):
        draft = {"name": "cut-release", "summary": "s", "body": "# b"}
        draft[missing] = ""
        scripted.queue("skill_draft", json.dumps(draft))
        reflect_turn(release_turn(make_turn).pk)
    spent = [e.payload for e in Event.objects.filter(name="auxiliary_spend", payload__purpose="skill_draft")]
    assert spent and all(row["outcome"] == "rejected" and row["reason"].startswith("the draft leaves ") for row in spent)
    assert not SynthesizedSkill.objects.filter(name="cut-release", description="s").exists()


def test_a_name_the_seat_already_has_is_rejected(seat, make_turn, scripted):
    existing = skills.create(seat=seat, name="cut-release", description="old", body="old", trigger="inline", tool_sequence=["z"])
    scripted.queue("skill_draft", json.dumps({"name": "cut-release", "summary": "new", "body": "# new"}))
    reflect_turn(release_turn(make_turn).pk)
    existing.refresh_from_db()
    assert existing.body == "old" and SynthesizedSkill.objects.count() == 1
    result = events.rows(ReflectionCompleted, seat=seat).first().payload["workers"]["synthesizer"]["result"]
    assert result["why"] == "name_collision"


def test_another_seats_skill_of_that_name_is_no_collision(seat, other_seat, make_turn, scripted):
    skills.create(seat=other_seat, name="cut-release", description="d", body="b", trigger="inline")
    scripted.queue("skill_draft", json.dumps({"name": "cut-release", "summary": "s", "body": "# b"}))
    reflect_turn(release_turn(make_turn).pk)
    assert SynthesizedSkill.objects.filter(seat=seat, name="cut-release").exists()


def test_a_decline_writes_nothing(seat, make_turn, scripted):
    scripted.queue("skill_draft", json.dumps({"decline": True, "reason": "not a procedure"}))
    reflect_turn(release_turn(make_turn).pk)
    assert not SynthesizedSkill.objects.exists()


def test_the_draft_prompt_names_woken_by_asked_and_what_it_did(seat, make_turn, scripted):
    reflect_turn(release_turn(make_turn).pk)
    text = "\n".join(m["content"] for m in draft_calls(scripted)[0]["messages"])
    assert "Woken by: PLAT-1: Cut release" in text and "Asked: PLAT-1: Cut release\nCut the release branch" in text
    assert "What it did:" in text and "task" not in text.lower() and "plan" not in text.lower()


CI_FIX = ["read_ci_log", "git_checkout", "apply_patch", "rerun_ci", "mattermost_post_message"]


def ci_turn(make_turn, said: str, tools=CI_FIX):
    return make_turn(conversation_kind="chat", label="Message from Dana", interactions=[human(said, handle="dana", name="Dana")],
                     tool_sequence=tools, tools_called=tools)


def test_a_skill_is_named_for_what_the_alike_runs_were_asked_not_only_the_turn_that_drafted_it(seat, make_turn):
    """make example: the second run drafts the skill, and it alone names nothing ("Now the release branch is red
    too."); the first ("CI on main is red again, can you fix it?") says what the work is."""
    reflect_turn(ci_turn(make_turn, "CI on main is red again, can you fix it?").pk)
    reflect_turn(ci_turn(make_turn, "Now the release branch is red too.").pk)
    skill = SynthesizedSkill.objects.get()
    assert skill.name == "fix-ci"
    assert skill.body.split("## When to use\n")[1].startswith('When asked to fix CI, as in: "Dana: CI on main is red again')
    assert "\n# Fix CI\n" in skill.body and skill.description.startswith("Fix CI: ")  # an acronym as the ask wrote it


def test_the_draft_prompt_shows_what_the_alike_runs_before_were_asked(seat, make_turn, scripted):
    reflect_turn(ci_turn(make_turn, "CI on main is red again, can you fix it?").pk)
    reflect_turn(ci_turn(make_turn, "Now the release branch is red too.").pk)
    text = "\n".join(m["content"] for m in draft_calls(scripted)[-1]["messages"])
    assert "similar tool run: 1; the newest were asked:\n- " in text and "can you fix it?" in text


# what a runtime that uses this service's tools calls around its work: recall first, load a skill, save a fact
MEMORY_TOOLS = ["query_episodes", "refresh_memory", "use_skill"]


def test_the_memory_and_skill_tools_are_no_tools_of_the_work_for_min_tool_calls(seat, make_turn, scripted):
    """Six distinct tools, but two of them did the work: no skill is drafted and no model is asked."""
    run = MEMORY_TOOLS + ["read_ci_log", "reflect_and_persist", "mattermost_post_message"]
    reflect_turn(ci_turn(make_turn, "CI on main is red again, can you fix it?", tools=run).pk)
    assert events.rows(ReflectionCompleted, seat=seat).first().payload["workers"]["synthesizer"]["gate"] == "too_few_tools"
    assert draft_calls(scripted) == []


def test_a_skill_drafted_from_a_run_that_recalled_first_has_only_the_work_as_steps(seat, make_turn, scripted):
    """make example: the agent calls query_episodes before it reads the CI log."""
    run = ["query_episodes", *CI_FIX, "reflect_and_persist"]
    reflect_turn(ci_turn(make_turn, "CI on main is red again, can you fix it?", tools=run).pk)
    reflect_turn(ci_turn(make_turn, "Now the release branch is red too.", tools=run).pk)
    skill = SynthesizedSkill.objects.get()
    assert skill.tool_sequence == CI_FIX
    assert "query_episodes" not in skill.body and "reflect_and_persist" not in skill.body
    assert "1. Call `read_ci_log`." in skill.body
    prompt = "\n".join(m["content"] for m in draft_calls(scripted)[-1]["messages"])
    assert "query_episodes" not in prompt and "read_ci_log, git_checkout" in prompt


def test_a_recorded_run_keeps_every_tool_it_called(seat, make_turn):
    """What is stored is what happened: the episode's tools are as called, memory tools included."""
    from learning.models import Episode

    run = ["query_episodes", *CI_FIX]
    reflect_turn(ci_turn(make_turn, "CI on main is red again, can you fix it?", tools=run).pk)
    assert Episode.objects.get(seat=seat).tool_sequence == run


def test_unlike_work_wrapped_in_the_same_memory_calls_is_not_alike():
    fix = ["query_episodes", "refresh_memory", "read_ci_log", "rerun_ci", "reflect_and_persist"]
    deploy = ["query_episodes", "refresh_memory", "read_ci_log", "deploy_service", "reflect_and_persist"]
    assert procedures.jaccard(fix, deploy) == 1 / 3  # the memory tools counted, 4 / 6: pooled at 0.6
    assert procedures.jaccard(["mcp__crewlet__query_episodes", "read_ci_log"], ["read_ci_log"]) == 1.0
    assert procedures.procedure(["mcp__crewlet__use_skill", "search_knowledge", "deploy"]) == ["search_knowledge", "deploy"]
