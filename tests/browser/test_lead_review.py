"""A lead's review in a real browser: publish a draft, roll a skill back, read the dashboard.

Screenshots land in var/screenshots/.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from core import events
from core.models import Event
from knowledge.models import Page
from learning.events import PersistDeciderCompleted
from learning.memory import diary
from learning.models import CounterpartyProfile, DiaryEntry, Episode, SynthesizedSkill
from learning.prefetch import PrefetchRequest, prefetch
from learning.reflection import reflect_turn
from learning.reflection.ring import RING
from learning.review import leads
from tests.factories import CompanyFactory, RoleFactory, SeatFactory, UnitFactory
from tests.learning.reflection.conftest import store
from tests.review_fixtures import BODY_V1, LEAD_PASSWORD, make_draft, make_skill

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def seed():
    company = CompanyFactory()
    unit = UnitFactory(company=company, key="eng", knowledge_container="ENG")
    role = RoleFactory(company=company, name="swe")
    ana, bo, cy = (SeatFactory(company=company, role=role, unit=unit, handle=h) for h in ("ana", "bo", "cy"))
    skill = make_skill(ana)
    for seat, uses in ((bo, 3), (cy, 0)):
        make_skill(seat, use_count=uses, created_at=timezone.now() - timedelta(days=40),
                   last_used_at=timezone.now() - timedelta(hours=5) if uses else None)
    for i in range(14):
        diary.write(seat=ana, content=f"Note {i}: ana's release checklist lives in the wiki", kind=DiaryEntry.LONG)
    now = timezone.now()
    for i, (label, outcome) in enumerate((("Fix flaky CI on main", "done"), ("Ship hotfix 2.4.1", "done"), ("Triage pager alert", "failed"))):
        Episode.objects.create(seat=ana, task_summary=label, review_outcome=outcome, plan_summary="Read the logs, patched, re-ran CI.",
                               tool_sequence=["git", "ci", "chat"], started_at=now - timedelta(hours=i), ended_at=now - timedelta(hours=i))
    CounterpartyProfile.objects.create(observer=ana, subject_handle="dana", display_name="Dana (release manager)",
                                       subject_platform="slack", communication_style="Terse; wants a link to the CI run.", observations=4)
    for i in range(3):
        prefetch(seat=ana, request=PrefetchRequest(run_id=f"run-p{i}", ask="why is the release checklist failing?"))
    for tier in ("LONG", "SHORT", "SHORT", "NOOP"):
        events.publish(PersistDeciderCompleted(classification=tier), seat=ana)
    RING.clear()
    turn = store(ana, run_id="run-42")
    reflect_turn(turn.pk)
    draft = make_draft(title="Deploy a hotfix", seats=("ana", "bo", "cy"))
    leads.create_lead(username="lena", password=LEAD_PASSWORD)
    return draft, skill


def log_in(page, base, next_path):
    page.goto(f"{base}/admin/login/?next={next_path}")
    page.fill("#id_username", "lena")
    page.fill("#id_password", LEAD_PASSWORD)
    page.click("input[type=submit]")


def test_a_lead_publishes_a_draft_rolls_a_skill_back_and_opens_the_dashboard(live_server, browser_page, screenshot):
    draft, skill = seed()
    page, base = browser_page, live_server.url

    log_in(page, base, "/admin/knowledge/draftpage/")
    page.wait_for_selector("text=[Auto-draft] Deploy a hotfix")
    screenshot("01_review_queue")
    page.click("text=[Auto-draft] Deploy a hotfix")
    page.wait_for_selector("#publish-draft")
    assert "3 distinct seats" in page.inner_text("body")
    screenshot("02_draft")
    page.click("#publish-draft")
    page.wait_for_selector("#published-link")
    # the test config's read scope is empty: the message says nobody can find it yet, and how to widen it
    said = page.inner_text(".messagelist")
    assert "no agent can find it yet" in said and "add \"ENG\" to knowledge.scope" in said, said
    screenshot("03_published")

    page.goto(f"{base}/admin/learning/synthesizedskill/{skill.pk}/change/")
    page.select_option("#rollback-version", "1")
    page.evaluate("window.notReloaded = true")
    page.click("#rollback-button")
    page.wait_for_selector("text=Rolled back as a forward step: now v4.")
    assert page.inner_text("#skill-version") == "4"
    assert page.evaluate("window.notReloaded === true")  # swapped in place by htmx, not a new page
    screenshot("04_skill_rolled_back")

    page.goto(f"{base}/learning/health/")
    page.wait_for_selector("#flagged-seats")
    assert "cy" in page.inner_text("#flagged-seats")
    screenshot("05_learning_health")
    page.select_option("#window-select", "30")
    page.wait_for_selector("#prefetch-rates >> text=last 30 days")
    assert "window=30" in page.url

    page.goto(f"{base}/learning/seats/ana/memory/")
    page.evaluate("window.notReloaded = true")
    page.click("#section-diary a[rel=next]")
    total = DiaryEntry.objects.filter(seat__handle="ana").count()  # 14 written + what the reflection kept
    assert 11 <= total <= 20
    page.wait_for_selector(f"#section-diary >> text=11–{total} of {total}")
    assert page.evaluate("window.notReloaded === true")
    screenshot("06_memory_tab")

    draft.refresh_from_db()
    assert draft.state == Page.PUBLISHED and draft.parent is None
    skill.refresh_from_db()
    assert skill.version == 4 and skill.body == BODY_V1
    actions = sorted(e.payload["action"] for e in Event.objects.filter(name="admin_action"))
    assert actions == ["publish_draft", "rollback"]
    assert {e.payload["user"] for e in Event.objects.filter(name="admin_action")} == {"lena"}
    assert SynthesizedSkill.objects.get(pk=skill.pk).versions.count() == 3
