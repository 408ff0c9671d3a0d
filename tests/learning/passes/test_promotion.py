"""Cross-agent promotion: distinct seats of one unit converge -> one draft page, announced once."""

from __future__ import annotations

import json
import logging
from datetime import timedelta

import pytest
from django.db import DatabaseError
from django.utils import timezone

from core.models import Event
from core.providers.llm.scripted import ScriptedProvider
from crewlet.config import schema
from knowledge import review
from knowledge.backends.native import NativePromotionWriter
from knowledge.models import AUTO_DRAFTED_PARENT, Page
from knowledge.searcher import search
from learning.models import SynthesizedSkill
from learning.passes.promotion import PURPOSE, cluster_title, run_promotion
from tests.factories import RoleFactory, SeatFactory, UnitFactory
from tests.knowledge import fixtures as knowledge_fixtures

# the knowledge fixtures, registered in this module (its package's conftest belongs to the passes)
_fresh_backends = knowledge_fixtures._fresh_backends
fake_confluence = knowledge_fixtures.fake_confluence
serve_confluence = knowledge_fixtures.serve_confluence
serve_native = knowledge_fixtures.serve_native

TOOLS = ["git_diff", "run_tests", "open_pr", "post_review"]
_clock = [timezone.now() - timedelta(days=10)]


def skill(seat, name, tools=TOOLS, **kw):
    _clock[0] += timedelta(minutes=1)
    return SynthesizedSkill.objects.create(
        seat=seat, name=name, description=f"{name}: test, diff and open a PR", body=f"# {name}\n\n1. run tests",
        tool_sequence=list(tools), created_at=_clock[0], **kw,
    )


@pytest.fixture
def org(company, role):
    eng = UnitFactory(company=company, key="eng", name="Engineering", knowledge_container="ENG")
    platform = UnitFactory(company=company, key="platform", name="Platform", knowledge_container="PLAT", parent=eng)
    seats = {h: SeatFactory(company=company, role=role, unit=platform, handle=h) for h in ("ana", "bo", "cy")}
    seats["eve"] = SeatFactory(company=company, role=role, unit=eng, handle="eve")
    return {"eng": eng, "platform": platform, **seats}


@pytest.fixture
def converging(org):
    return [
        skill(org["ana"], "ship-a-pr"),
        skill(org["bo"], "pr-flow", TOOLS[:3] + ["post_review"]),
        skill(org["cy"], "ship-a-pr", TOOLS + ["notify_channel"]),
    ]


@pytest.fixture(autouse=True)
def native(serve_native):
    serve_native(scope=["ENG", "PLAT"])


def drafts(container="PLAT"):
    return list(Page.objects.filter(container_key=container, state=Page.DRAFT))


def promoted_events():
    return list(Event.objects.filter(name="skill_promoted"))


def test_three_seats_converging_yield_one_draft_under_auto_drafted_skills(org, converging):
    report = run_promotion()

    (page,) = drafts()
    assert page.parent.title == AUTO_DRAFTED_PARENT and page.parent.container_key == "PLAT"
    assert page.title.startswith("[Auto-draft] Platform procedure: ")
    assert page.source["seats"] == ["ana", "bo", "cy"]
    assert [s["id"] for s in page.source["skills"]] == [s.pk for s in converging]
    assert "ana: ship-a-pr" in page.body and "Call run_tests." in page.body
    assert report["promoted"] == [{"unit": "platform", "page_id": str(page.pk), "page_title": page.title}]


def test_skill_promoted_carries_unit_container_page_and_both_counts(org, converging):
    skill(org["ana"], "ship-a-pr-again")
    run_promotion()
    (event,) = promoted_events()
    page = drafts()[0]
    assert event.payload == {
        "unit": "platform", "container_key": "PLAT", "page_id": str(page.pk), "page_title": page.title,
        "sibling_count": 4, "distinct_agents": 3, "skills": event.payload["skills"], "seats": ["ana", "bo", "cy"],
    }


def test_one_seat_with_four_similar_skills_promotes_nothing(org):
    for i in range(4):
        skill(org["ana"], f"ship-a-pr-{i}")
    report = run_promotion()
    assert drafts() == [] and promoted_events() == [] and report["converged"] == 0


def test_rows_from_too_few_seats_never_count_as_siblings(org):
    for i in range(3):
        skill(org["ana"], f"ship-{i}")
    skill(org["bo"], "ship-b")
    run_promotion()
    assert drafts() == []


def test_a_parent_unit_never_pools_its_childrens_skills(org):
    skill(org["eve"], "ship-e")
    skill(org["ana"], "ship-a")
    skill(org["bo"], "ship-b")
    run_promotion()
    assert drafts("ENG") == [] and drafts("PLAT") == []


def test_a_childs_convergence_is_drafted_in_the_childs_container_only(org, converging):
    skill(org["eve"], "ship-e")
    run_promotion()
    assert len(drafts("PLAT")) == 1 and drafts("ENG") == []


def test_a_later_tick_that_finds_the_draft_stays_quiet(org, converging):
    run_promotion()
    spend_after_first = Event.objects.filter(name="auxiliary_spend", payload__purpose=PURPOSE).count()
    skill(org["ana"], "ship-a-pr-v2")  # the cluster grows, its title does not change
    report = run_promotion(now=timezone.now() + timedelta(days=1))
    assert len(drafts()) == 1 and len(promoted_events()) == 1
    assert report["promoted"] == [] and report["already_drafted"] == 1
    assert Event.objects.filter(name="auxiliary_spend", payload__purpose=PURPOSE).count() == spend_after_first


def spend_count():
    return Event.objects.filter(name="auxiliary_spend", payload__purpose=PURPOSE).count()


def test_a_rejected_draft_is_not_drafted_again_from_the_same_rows(org, converging, lead):
    run_promotion()
    review.reject_draft(page=drafts()[0], user=lead)
    spent = spend_count()

    report = run_promotion(now=timezone.now() + timedelta(days=1))

    assert drafts() == [] and len(promoted_events()) == 1 and report["promoted"] == []
    assert report["held_after_rejection"] == 1 and spend_count() == spent  # no model call


def test_a_rejected_draft_is_redrafted_when_the_cluster_still_converges_with_a_skill_never_seen(org, converging, lead):
    run_promotion()
    first = drafts()[0]
    review.reject_draft(page=first, user=lead)
    newcomer = skill(org["bo"], "pr-flow-v2")

    report = run_promotion(now=timezone.now() + timedelta(days=1))

    (again,) = drafts()
    assert again.title == first.title and len(promoted_events()) == 2 and len(report["promoted"]) == 1
    assert newcomer.pk in [s["id"] for s in again.source["skills"]]
    review.reject_draft(page=again, user=lead)
    assert run_promotion()["held_after_rejection"] == 1 and drafts() == []  # rejected twice: new evidence again


def test_a_skill_that_joined_while_the_draft_waited_is_no_new_evidence_after_its_rejection(org, converging, lead):
    run_promotion()
    skill(org["cy"], "ship-a-pr-v2")  # joins the cluster while the draft waits for review
    assert run_promotion()["already_drafted"] == 1
    review.reject_draft(page=drafts()[0], user=lead)
    spent = spend_count()
    assert run_promotion()["held_after_rejection"] == 1 and drafts() == [] and spend_count() == spent


def test_new_evidence_after_a_rejection_is_not_enough_when_the_team_no_longer_converges(org, converging):
    run_promotion()
    drafts()[0].delete()  # a deleted draft counts as a rejection
    converging[2].state = SynthesizedSkill.ARCHIVED  # cy's skill: two seats are left
    converging[2].save()
    skill(org["ana"], "ship-a-pr-again")  # a skill never seen, but from a seat already counted
    spent = spend_count()
    report = run_promotion()
    assert drafts() == [] and report["converged"] == 0 and spend_count() == spent


def test_the_drafts_key_survives_the_archiving_of_its_oldest_source_skill(org):
    seed = skill(org["ana"], "ship-and-lint", TOOLS + ["lint"])
    skill(org["bo"], "pr-flow", TOOLS)
    skill(org["cy"], "ship-and-notify", TOOLS + ["notify_channel"])
    run_promotion()
    (page,) = drafts()
    assert "lint" in page.title  # the seed's tool set named it
    seed.state = SynthesizedSkill.ARCHIVED
    seed.save()
    skill(org["ana"], "ship-a-pr", TOOLS)  # ana still takes part: the team still converges, seeded by bo now
    spent = spend_count()

    report = run_promotion(now=timezone.now() + timedelta(days=1))

    assert drafts() == [page] and report["already_drafted"] == 1 and report["promoted"] == []
    assert spend_count() == spent and len(promoted_events()) == 1


def test_a_failed_skill_promoted_write_keeps_the_draft_and_the_record(org, converging, monkeypatch):
    from core.models import Event as EventModel

    create = EventModel.objects.create

    def refuse_skill_promoted(**fields):
        if fields["name"] == "skill_promoted":
            raise DatabaseError("event table is read-only")
        return create(**fields)

    monkeypatch.setattr(EventModel.objects, "create", refuse_skill_promoted)
    report = run_promotion()
    monkeypatch.undo()
    (page,) = drafts()
    assert report["promoted"] == [{"unit": "platform", "page_id": str(page.pk), "page_title": page.title}]
    assert promoted_events() == [] and report["failed"] == []
    assert run_promotion()["already_drafted"] == 1 and len(drafts()) == 1


def test_a_published_draft_is_not_drafted_again(org, converging):
    run_promotion()
    page = drafts()[0]
    page.title, page.parent, page.state = page.title.removeprefix("[Auto-draft] "), None, Page.PUBLISHED
    page.save()
    run_promotion()
    assert drafts() == [] and len(promoted_events()) == 1


def test_a_unit_with_no_container_is_skipped_naming_the_field(org, converging, caplog):
    org["platform"].knowledge_container = ""
    org["platform"].save()
    caplog.set_level(logging.INFO, logger="learning.passes.promotion")
    report = run_promotion()
    assert Page.objects.count() == 0 and promoted_events() == []
    assert "Unit.knowledge_container" in caplog.text and "platform" in caplog.text
    assert report["skipped_units"][0]["unit"] == "platform"


def test_a_write_failure_announces_nothing_and_the_next_tick_retries(org, converging, monkeypatch):
    def refuse(self, container_key):
        raise DatabaseError("read-only replica")

    monkeypatch.setattr(NativePromotionWriter, "ensure_parent", refuse)
    report = run_promotion()
    assert Page.objects.count() == 0 and promoted_events() == [] and len(report["failed"]) == 1
    monkeypatch.undo()
    run_promotion()
    assert len(drafts()) == 1 and len(promoted_events()) == 1


def test_the_draft_never_reaches_any_agents_search(org, converging):
    run_promotion()
    result = search(org["ana"], "git_diff run_tests open_pr ship", 10)
    assert result.ran and result.pages == []


def test_dissimilar_tool_runs_do_not_converge(org):
    skill(org["ana"], "a", ["git_diff", "run_tests", "open_pr"])
    skill(org["bo"], "b", ["query_db", "plot", "email"])
    skill(org["cy"], "c", ["git_diff", "deploy", "page_oncall"])
    run_promotion()
    assert drafts() == []


def test_the_thresholds_come_from_learning_promotion(org, serve_native):
    skill(org["ana"], "a", ["git_diff", "run_tests", "open_pr"])
    skill(org["bo"], "b", ["git_diff", "run_tests", "open_pr"])
    run_promotion()
    assert drafts() == []
    serve_native(scope=["PLAT"], learning=schema.Learning(promotion=schema.Promotion(min_sibling_count=2)))
    run_promotion()
    assert len(drafts()) == 1


def test_archived_skills_and_inactive_seats_do_not_count(org, converging):
    converging[0].state = SynthesizedSkill.ARCHIVED
    converging[0].save()
    run_promotion()
    assert drafts() == []
    converging[0].state = SynthesizedSkill.ACTIVE
    converging[0].save()
    org["cy"].active = False
    org["cy"].save()
    run_promotion()
    assert drafts() == []


def test_the_distillation_is_one_background_auxiliary_call(org, converging):
    run_promotion()
    (spend,) = Event.objects.filter(name="auxiliary_spend", payload__purpose=PURPOSE)
    assert spend.payload["stage"] == "background" and spend.seat == org["ana"]


def test_the_models_answer_becomes_the_page(company, org, converging):
    scripted = RoleFactory(company=company, name="scripted-swe", llm=["scripted"], llm_auxiliary=["scripted"])
    for handle in ("ana", "bo", "cy"):
        org[handle].role = scripted
        org[handle].save()
    ScriptedProvider.queue(PURPOSE, json.dumps({
        "name": "PR hygiene", "summary": "Test before you open a PR.", "when_to_use": "Every change.",
        "steps": ["Run the suite.", "Open the PR."],
    }))
    run_promotion()
    body = drafts()[0].body
    assert body.startswith("PR hygiene: Test before you open a PR.")
    assert "1. Run the suite.\n2. Open the PR." in body
    prompt = ScriptedProvider.calls[0]["messages"][1]["content"]
    assert "3 distinct agents" in prompt and "### ship-a-pr (agent ana)" in prompt


def test_an_unparseable_answer_announces_nothing(company, org, converging):
    scripted = RoleFactory(company=company, name="scripted-swe", llm=["scripted"], llm_auxiliary=["scripted"])
    for handle in ("ana", "bo", "cy"):
        org[handle].role = scripted
        org[handle].save()
    ScriptedProvider.queue(PURPOSE, "I think these are all about pull requests.")
    report = run_promotion()
    assert Page.objects.count() == 0 and promoted_events() == [] and len(report["failed"]) == 1


def test_promotion_off_does_nothing(org, converging, serve_native):
    serve_native(scope=["PLAT"], learning=schema.Learning(promotion=schema.Promotion(enabled=False)))
    assert run_promotion()["disabled"] is True
    assert Page.objects.count() == 0


def test_the_title_is_a_function_of_the_tool_set_and_fits_the_limit(org):
    unit = org["platform"]
    assert cluster_title(unit, frozenset(["b", "a"])) == cluster_title(unit, frozenset(["a", "b"]))
    many = frozenset(f"tool_with_a_rather_long_name_{i:02d}" for i in range(40))
    title = cluster_title(unit, many)
    assert len("[Auto-draft] " + title) <= 255 and "+" in title and "more" in title
    assert cluster_title(unit, many - {"tool_with_a_rather_long_name_39"}) != title


def test_the_confluence_writer_is_driven_the_same_way(org, converging, serve_confluence, fake_confluence):
    serve_confluence(fake_confluence.url, scope=["ENG"])
    run_promotion()
    run_promotion()
    (event,) = promoted_events()
    draft = fake_confluence.pages[event.payload["page_id"]]
    assert draft.space == "PLAT" and fake_confluence.pages[draft.ancestors[-1]].title == AUTO_DRAFTED_PARENT
    assert "ana: ship-a-pr" in draft.body
    assert len([r for r in fake_confluence.posts() if r.body["title"] == draft.title]) == 1


def test_the_tools_line_names_every_tool_the_steps_call(company, org, converging):
    """A draft must not contradict itself: steps calling five tools never sit over a Tools line of four."""
    scripted = RoleFactory(company=company, name="scripted-swe", llm=["scripted"], llm_auxiliary=["scripted"])
    for handle in ("ana", "bo", "cy"):
        org[handle].role = scripted
        org[handle].save()
    ScriptedProvider.queue(PURPOSE, json.dumps({
        "name": "PR hygiene", "summary": "Test before you open a PR.", "when_to_use": "Every change.",
        "steps": ["Call git_diff.", "Call run_tests.", "Call open_pr.", "Call post_review.", "Call notify_channel."],
    }))
    run_promotion()
    page = drafts()[0]
    tools_line = page.body.split("## Tools\n\n")[1].split("\n")[0]
    assert tools_line.split(", ") == ["git_diff", "run_tests", "open_pr", "post_review", "notify_channel"]
    assert [s["turn"] for s in page.source["skills"]] == ["", "", ""]  # provenance names each source turn


class Killed(BaseException):
    """The queue's timeout kill, as the pass sees it: nothing inside the pass catches it."""


def test_a_pass_killed_after_two_units_every_tick_still_drafts_all_five_within_three_ticks(
        company, role, serve_native, monkeypatch):
    from learning.passes import promotion

    units = [UnitFactory(company=company, key=f"team{i}", name=f"Team {i}", knowledge_container=f"T{i}")
             for i in range(5)]
    serve_native(scope=[u.knowledge_container for u in units])
    for u in units:
        for h in ("a", "b", "c"):
            skill(SeatFactory(company=company, role=role, unit=u, handle=f"{u.key}-{h}"), f"ship-{h}")
    real, begun = promotion.unit_clusters, []

    def dies_at_the_third_unit(unit, knobs):
        begun.append(unit.key)
        if len(begun) % 3 == 0:
            raise Killed
        return real(unit, knobs)

    monkeypatch.setattr(promotion, "unit_clusters", dies_at_the_third_unit)
    for _tick in range(3):
        with pytest.raises(Killed):
            run_promotion()
    assert [len(drafts(u.knowledge_container)) for u in units] == [1, 1, 1, 1, 1]
    assert begun == ["team0", "team1", "team2", "team3", "team4", "team0", "team1", "team2", "team3"]
