"""The offline answers: deterministic and sensible on realistic turns, and parsed like a model's."""

import json
from datetime import date

import pytest

from learning.purposes import persist_decision, profile_update, skill_draft, skill_refinement

TODAY = date(2026, 5, 1)


def persist(body, sender="Maya", recent=()):
    inputs = persist_decision.Inputs(today=TODAY.isoformat(), recent_notes=list(recent),
                                     interactions=[{"sender": sender, "sender_kind": "human", "body": body}])
    return persist_decision.parse(persist_decision.offline(inputs))


def test_a_stated_preference_is_a_long_declarative_fact():
    answer = persist("Thanks! I prefer short bullet-point status updates, please.")
    assert answer.classification == "LONG"
    assert answer.content == "Maya prefers short bullet-point status updates."


def test_an_instruction_is_never_turned_into_a_note():
    answer = persist("Please always open a ticket before each deploy.")
    assert (answer.classification, answer.content) == ("NOOP", "")


def test_a_dated_situation_is_short_with_a_ttl_to_that_date():
    answer = persist("Heads up: I'm on vacation through 2026-05-10.")
    assert answer == persist_decision.Decision(classification="SHORT", content="Maya is on vacation through 2026-05-10.",
                                               ttl_days=10, reason="a dated situation", skill_actions=[])


def test_a_weekday_deadline_gets_its_date_spelled_out():
    answer = persist("The code freeze runs until Friday.")  # 2026-05-01 is a Friday: the next one
    assert answer.classification == "SHORT" and answer.ttl_days == 8
    assert answer.content == "The code freeze runs until Friday (ends 2026-05-08)."


def test_an_undated_situation_is_anchored_to_today():
    answer = persist("I'm out of office this week.")
    assert answer.content == "Maya is out of office this week (as of 2026-05-01)." and answer.ttl_days == 7


def test_questions_and_chatter_are_noop():
    for body in ("Can you check the build?", "+1", "Thanks, looks good.", "Are you on vacation next week?"):
        assert persist(body).classification == "NOOP", body


def test_a_repeat_of_a_recent_note_is_noop():
    answer = persist("I prefer short bullet-point status updates.", recent=["Maya prefers short bullet-point status updates."])
    assert answer.classification == "NOOP" and "recent" in answer.reason


def test_a_team_practice_is_a_doc_recommendation():
    assert persist("Team convention: everyone should squash-merge.").classification == "DOC"


def test_a_bot_is_not_a_source_of_facts():
    inputs = persist_decision.Inputs(today=TODAY.isoformat(),
                                     interactions=[{"sender": "CI", "sender_kind": "bot", "body": "I prefer green builds"}])
    assert persist_decision.decide(inputs)["classification"] == "NOOP"


def test_a_repeated_five_tool_procedure_is_drafted_and_a_first_run_declined():
    tools = ["jira_get_issue", "git_checkout", "git_create_branch", "run_tests", "jira_transition"]
    inputs = skill_draft.Inputs(mode="turn", asked="PLAT-117: Cut release 4.3\nCut the release branch for 4.3 and run the checklist.",
                                outcome="done", tool_sequence=tools, prior_runs=0)
    assert skill_draft.parse(skill_draft.offline(inputs)).decline is True
    draft = skill_draft.parse(skill_draft.offline(inputs.model_copy(update={"prior_runs": 1})))
    assert draft.name == "create-release-branch" and draft.missing == []
    assert "4.3" not in draft.name and "When asked to create release branch, as in: \"Cut the release branch for <n> and run the checklist.\"" in draft.body
    assert [line for line in draft.body.splitlines() if line[:1].isdigit()] == [f"{i}. Call `{t}`." for i, t in enumerate(tools, 1)]


def test_a_one_tool_loop_and_a_failure_are_declined():
    base = {"mode": "turn", "asked": "x", "prior_runs": 3}
    assert skill_draft.draft(skill_draft.Inputs(**base, outcome="done", tool_sequence=["read"] * 6))["decline"]
    assert skill_draft.draft(skill_draft.Inputs(**base, outcome="failed", tool_sequence=["a", "b", "c", "d", "e"]))["decline"]


def test_the_refiner_is_noop_unless_the_run_adds_a_step_or_fails_review():
    skill = {"name": "s", "tool_sequence": ["a", "b", "c"]}
    base = {"skills": [skill], "tool_sequence": ["a", "b", "c"], "outcome": "done"}

    def offline(**changes):
        return skill_refinement.offline(skill_refinement.Inputs(**{**base, **changes}))

    assert offline() == "NOOP"
    assert skill_refinement.parse(offline(tool_sequence=["a", "b", "d", "c"])).observation == \
        "the run also needed `d` after `b`."
    assert offline(outcome="failed", failure_set_by="budget") == "NOOP"
    failed = skill_refinement.parse(offline(outcome="failed", failure_set_by="reviewer"))
    assert failed.skill == "s"


def test_a_profile_reads_style_decisions_and_sensitivities():
    answer = profile_update.parse(profile_update.offline(profile_update.Inputs(
        subject="Tom", messages=["Let's go with Thursday.", "Please avoid Friday deploys.", "I'm worried about weekends."]
    )))
    assert answer.communication_style.startswith("Writes terse")
    assert answer.past_decisions == ["Tom decided to go with Thursday."]
    assert answer.sensitivities == ["Tom is worried about weekends."]  # the request is no line of a profile


@pytest.mark.parametrize("said,decisions,sensitivities", [
    # cy's demo thread: "Let's go with Thursday 06:00 UTC" was kept as said, so a later turn's profile of Maya read
    # as an order with no one giving it, and no longer said who chose Thursday
    ("Fine by me. Let's go with Thursday 06:00 UTC.", ["Maya decided to go with Thursday 06:00 UTC."], []),
    ("Ok, let's not ship my branch today.", ["Maya decided not to ship their branch today."], []),
    # an instruction is never a line of a profile, alone or after a statement
    ("Can you reproduce this against staging first? Don't touch the production queue.", [], []),
    ("Never deploy on Fridays, our customers hate it.", [], []),
    ("Lena is in Tokyo this month, so don't book reviews before 9am her time.", [], []),
])
def test_a_profile_says_who_decided_and_holds_no_instruction(said, decisions, sensitivities):
    answer = profile_update.parse(profile_update.offline(profile_update.Inputs(subject="Maya", messages=[said])))
    assert (answer.past_decisions, answer.sensitivities) == (decisions, sensitivities)


def test_a_profile_names_a_team_only_when_we_is_about_work():
    answer = profile_update.parse(profile_update.offline(profile_update.Inputs(
        subject="Tom", messages=["We decided to skip the beach this summer.",
                                 "We will never deploy the billing service on Fridays."]
    )))
    assert answer.past_decisions == ["Tom and others decided to skip the beach this summer.",
                                     "Tom's team will never deploy the billing service on Fridays."]


def test_offline_answers_are_deterministic():
    inputs = {"today": TODAY.isoformat(), "interactions": [{"sender": "Maya", "sender_kind": "human", "body": "I prefer tea."}]}
    answer = persist_decision.offline(persist_decision.Inputs(**inputs))
    assert answer == persist_decision.offline(persist_decision.Inputs(**inputs))
    assert json.loads(answer)["classification"] == "LONG"
