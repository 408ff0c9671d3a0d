"""Refiner, the auto path: live skills only, one bullet, NOOP expected, versioned, bounded."""

import json

from core import events
from crewlet.config import schema
from learning import skill_body
from learning.events import ReflectionCompleted, SkillRefined
from learning.memory import skills
from learning.models import SkillVersion, SynthesizedSkill
from learning.purposes import skill_refinement
from learning.reflection import reflect_turn
from learning.reflection.workers import refiner

TOOLS = ["jira_get_issue", "git_checkout", "git_create_branch", "run_tests", "jira_transition"]


def make_skill(seat, name="cut-release-branch", body=None):
    return skills.create(
        seat=seat, name=name, description="Cut a release branch", trigger="inline", tool_sequence=TOOLS,
        body=body or skill_body.skill_md(name=name, description="Cut a release branch", body="# Cut\n\n## Steps\n1. Call `git_checkout`."),
    )


def refine_calls(scripted):
    return [c for c in scripted.calls if c["purpose"] == "skill_refinement"]


def worker(seat):
    return events.rows(ReflectionCompleted, seat=seat).first().payload["workers"]["refiner"]


def test_a_successful_turn_appends_observed_in_practice_under_one_heading(seat, make_turn):
    skill = make_skill(seat)
    reflect_turn(make_turn(skills_offered=[skill.pk], tool_sequence=TOOLS + ["post_release_notes"]).pk).get("gate")
    skill.refresh_from_db()
    assert skill.version == 2
    assert skill.body.rstrip().endswith(
        "## What practice added\n- Observed in practice: the run also needed `post_release_notes` after `jira_transition`."
    )
    assert SkillVersion.objects.get(skill=skill).version == 1
    event = events.rows(SkillRefined, seat=seat).first()
    assert event.payload["version"] == 2 and event.payload["bullet"].startswith("Observed in practice:")


def test_a_failed_turn_appends_a_counter_example_under_the_same_heading(seat, make_turn):
    skill = make_skill(seat)
    reflect_turn(make_turn(skills_offered=[skill.pk], tool_sequence=TOOLS + ["post_release_notes"]).pk)
    reflect_turn(make_turn(skills_offered=[skill.pk], tool_sequence=TOOLS, review_outcome="failed",
                           failure_set_by="reviewer", failure_reason="the changelog was stale").pk)
    skill.refresh_from_db()
    assert skill.body.count("## What practice added") == 1
    assert skill_body.practice_bullets(skill.body)[1].startswith("Counter-example: ")
    assert skill.version == 3


def test_the_model_written_prefix_is_not_doubled_and_the_outcome_picks_it(seat, make_turn, scripted):
    skill = make_skill(seat)
    scripted.queue("skill_refinement", json.dumps({"skill": skill.name, "observation": "Observed in practice: staging first."}))
    reflect_turn(make_turn(skills_offered=[skill.pk], review_outcome="failed", failure_set_by="reviewer").pk)
    skill.refresh_from_db()
    assert skill_body.practice_bullets(skill.body) == ["Counter-example: staging first."]


def test_noop_is_expected_and_changes_nothing(seat, make_turn, scripted):
    skill = make_skill(seat)
    scripted.queue("skill_refinement", "NOOP")
    reflect_turn(make_turn(skills_offered=[skill.pk], tool_sequence=TOOLS).pk)
    skill.refresh_from_db()
    assert skill.version == 1 and worker(seat)["result"] == {"refined": False, "why": "noop"}


def test_an_invented_skill_name_is_dropped_not_matched_to_the_nearest(seat, make_turn, scripted):
    skill = make_skill(seat)
    scripted.queue("skill_refinement", json.dumps({"skill": "cut-release-branches", "observation": "x"}))
    reflect_turn(make_turn(skills_offered=[skill.pk]).pk)
    skill.refresh_from_db()
    assert skill.version == 1
    from core.models import Event

    spent = Event.objects.filter(name="auxiliary_spend", payload__purpose="skill_refinement").get()
    assert spent.payload["reason"] == "skill 'cut-release-branches' is not one the turn was offered"


def test_archived_skills_are_not_resurrected_and_cost_no_call(seat, make_turn, scripted):
    skill = make_skill(seat)
    SynthesizedSkill.objects.filter(pk=skill.pk).update(state=SynthesizedSkill.ARCHIVED)
    reflect_turn(make_turn(skills_offered=[skill.pk]).pk)
    assert worker(seat) == {"status": "skipped", "gate": "no_live_skills"}
    assert refine_calls(scripted) == []


def test_one_call_for_the_whole_offered_catalogue(seat, make_turn, scripted):
    a, b = make_skill(seat, "a"), make_skill(seat, "b")
    reflect_turn(make_turn(skills_offered=[a.pk, b.pk]).pk)
    calls = refine_calls(scripted)
    assert len(calls) == 1 and [s["name"] for s in calls[0]["inputs"].skills] == ["a", "b"]


def test_self_iterate_is_never_refined(make_turn, seat, ctx_of):
    skill = make_skill(seat)
    assert refiner.Refiner().applies(ctx_of(make_turn(skills_offered=[skill.pk], review_outcome="self_iterate"))) == "unsettled"


def test_the_auto_flags_gate_their_outcome(seat, make_turn, ctx_of, serve_config):
    skill = make_skill(seat)
    serve_config(learning=schema.Learning(skill_refinement=schema.SkillRefinement(auto_refine_on_success=False)))
    assert refiner.Refiner().applies(ctx_of(make_turn(skills_offered=[skill.pk]))) == "auto_refine_on_success_off"
    failed = make_turn(skills_offered=[skill.pk], review_outcome="failed", failure_set_by="reviewer")
    assert refiner.Refiner().applies(ctx_of(failed)) is None
    serve_config(learning=schema.Learning(skill_refinement=schema.SkillRefinement(auto_refine_on_failure=False)))
    assert refiner.Refiner().applies(ctx_of(failed)) == "auto_refine_on_failure_off"


def test_a_role_that_turns_refinement_off_closes_the_gate(seat, make_turn, ctx_of, serve_config):
    skill = make_skill(seat)
    serve_config(roles={"swe": schema.RoleSpec(learning={"skill_refinement": {"enabled": False}})})
    assert refiner.Refiner().applies(ctx_of(make_turn(skills_offered=[skill.pk]))) == "refinement_disabled"


def test_history_is_bounded_by_max_versions_kept(seat, make_turn, serve_config):
    serve_config(learning=schema.Learning(skill_refinement=schema.SkillRefinement(max_versions_kept=3)))
    skill = make_skill(seat)
    for n in range(6):
        reflect_turn(make_turn(skills_offered=[skill.pk], tool_sequence=TOOLS + [f"extra_{n}"]).pk)
    skill.refresh_from_db()
    assert skill.version == 7
    assert list(SkillVersion.objects.filter(skill=skill).values_list("version", flat=True)) == [6, 5, 4]


def test_a_refinement_past_max_body_chars_is_skipped_and_logged_never_clipped(seat, make_turn, serve_config, caplog):
    serve_config(learning=schema.Learning(skill_refinement=schema.SkillRefinement(max_body_chars=300)))
    skill = make_skill(seat, body="---\nname: x\n---\n" + "s" * 270)
    reflect_turn(make_turn(skills_offered=[skill.pk], tool_sequence=TOOLS + ["post_release_notes"]).pk)
    skill.refresh_from_db()
    assert skill.version == 1 and skill.body.endswith("s" * 270)
    assert worker(seat)["result"] == {"refined": False, "why": "max_body_chars"}
    assert "max_body_chars" in caplog.text


def test_the_prompt_says_twice_that_noop_is_correct():
    system = skill_refinement.SYSTEM
    assert system.count("NOOP is correct") + system.count("NOOP is the right answer") == 2
    assert "task" not in system.lower() and "plan" not in system.lower()


def test_loading_the_skill_and_recalling_past_turns_are_no_step_the_skill_lacked(seat, make_turn):
    """A runtime that loads the offered skill and recalls its past turns before it acts calls ``use_skill`` and
    ``query_episodes`` in every run: the skill's procedure did not miss them."""
    skill = make_skill(seat)
    run = ["use_skill", "query_episodes", *TOOLS, "reflect_and_persist"]
    reflect_turn(make_turn(skills_offered=[skill.pk], tool_sequence=run, tools_called=run).pk)
    skill.refresh_from_db()
    assert skill.version == 1 and "What practice added" not in skill.body
    assert worker(seat)["result"] == {"refined": False, "why": "noop"}
