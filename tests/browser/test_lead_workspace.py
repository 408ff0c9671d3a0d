"""The lead's workspace in a real browser, as a lead who is not a superuser.

The home, editing and publishing a draft and following its links, forgetting and correcting a note
(then a prefetch no longer shows it), a turn's "what it was shown" page, and the trends page with a
window change. Screenshots land in var/screenshots/ (workspace_*.png).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from core import events
from knowledge.models import Page, PageVersion
from learning.events import NoteCorrected, NoteForgotten
from learning.memory import diary
from learning.models import DiaryEntry
from learning.prefetch import PrefetchRequest, prefetch
from learning.review import leads
from tests.factories import CompanyFactory, RoleFactory, SeatFactory, UnitFactory
from tests.review_fixtures import LEAD_PASSWORD, make_draft, make_skill

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ASK = "how do we deploy a hotfix to billing"


def seed():
    company = CompanyFactory()
    unit = UnitFactory(company=company, key="eng", knowledge_container="ENG")
    role = RoleFactory(company=company, name="swe")
    ana, bo = (SeatFactory(company=company, role=role, unit=unit, handle=h) for h in ("ana", "bo"))
    skill = make_skill(ana)
    for i in range(3):
        make_skill(bo, name=f"unused-{i}", use_count=0, created_at=timezone.now() - timedelta(days=60))
    kept = diary.write(seat=ana, content="Hotfixes to billing go through the release branch", kind=DiaryEntry.LONG,
                       turn_id="run-1")
    wrong = diary.write(seat=ana, content="Hotfixes to billing are deployed straight to main", kind=DiaryEntry.LONG,
                        turn_id="run-1")
    stale = diary.write(seat=ana, content="Billing hotfixes need a sign-off from Bob", kind=DiaryEntry.LONG, turn_id="run-1")
    prefetch(seat=ana, request=PrefetchRequest(run_id="run-2", ask=ASK))
    draft = make_draft(title="Deploy a hotfix", seats=("ana",),
                       skills_=[{"id": skill.pk, "name": skill.name, "seat": "ana", "turn": "run-2"}])
    lead = leads.create_lead(username="lena", password=LEAD_PASSWORD)
    assert not lead.is_superuser
    return {"ana": ana, "kept": kept, "wrong": wrong, "stale": stale, "draft": draft, "skill": skill}


def log_in(page, base, next_path):
    page.goto(f"{base}/admin/login/?next={next_path}")
    page.fill("#id_username", "lena")
    page.fill("#id_password", LEAD_PASSWORD)
    page.click("input[type=submit]")


def shown_notes(seat, run_id) -> list[int]:
    result = prefetch(seat=seat, request=PrefetchRequest(run_id=run_id, ask=ASK))
    return next(b for b in result["blocks"] if b["name"] == "personal_memory")["shown"].get("notes", [])


def test_the_home_and_a_draft_edited_published_and_followed(live_server, browser_page, screenshot):
    s = seed()
    page, base = browser_page, live_server.url

    log_in(page, base, "/admin/")
    page.wait_for_selector("#lead-home-card")
    assert "1 waiting" in page.inner_text("#lead-home-card")
    screenshot("workspace_01_admin_index")
    page.click("text=View site")
    page.wait_for_selector("#review-waiting")
    assert page.url == f"{base}/learning/"
    assert "bo" in page.inner_text("#below-threshold")
    screenshot("workspace_02_home")

    page.click("#review-waiting >> text=Auto-drafted pages")
    page.click("text=[Auto-draft] Deploy a hotfix")
    page.wait_for_selector("#edit-draft")
    screenshot("workspace_03_draft_provenance")
    page.click("#edit-draft")
    page.fill("#id_body", page.input_value("#id_body") + "4. Announce in #releases\n")
    page.click("#save-draft-edit")
    page.wait_for_selector("text=Saved as a new version.")
    assert "v2 by lena" in page.inner_text("body")
    page.click("#publish-draft")
    page.wait_for_selector("#published-link")
    screenshot("workspace_04_published")
    assert page.url.endswith(f"/admin/knowledge/page/{s['draft'].pk}/change/")

    page.click(".provenance-skill a >> nth=0")  # the skill it came from, with its history
    page.wait_for_selector("#skill-version")
    page.go_back()
    page.click(".provenance-skill >> text=run-2")  # the turn the skill was drafted from
    page.wait_for_selector("#what-it-was-shown")

    draft = Page.objects.get(pk=s["draft"].pk)
    assert draft.state == Page.PUBLISHED and "Announce in #releases" in draft.body
    assert [v.author for v in PageVersion.objects.filter(page=draft).order_by("number")] == ["crewlet-promotion", "lena"]


def test_a_note_forgotten_and_one_corrected_then_the_turn_and_trends_pages(live_server, browser_page, screenshot):
    s = seed()
    ana, wrong, stale, kept = s["ana"], s["wrong"], s["stale"], s["kept"]
    assert wrong.pk in shown_notes(ana, "run-before")
    page, base = browser_page, live_server.url

    log_in(page, base, "/learning/seats/ana/memory/")
    page.wait_for_selector("#memory-search")
    page.fill("#memory-search", "billing")
    page.evaluate("window.notReloaded = true")
    page.press("#memory-search", "Enter")
    page.wait_for_selector("#search-results >> text=3 matches")
    assert page.evaluate("window.notReloaded === true")
    screenshot("workspace_05_memory_search")

    page.on("dialog", lambda dialog: dialog.accept())
    page.click(f"#section-diary #forget-{wrong.pk}")
    page.wait_for_selector(f"#section-diary >> text=note {wrong.pk} is gone")
    page.click(f"#section-diary #note-{stale.pk} summary")
    page.fill(f"#section-diary #note-{stale.pk} textarea", "Billing hotfixes need a sign-off from Dana")
    page.click(f"#section-diary #correct-{stale.pk}")
    page.wait_for_selector(f"#section-diary #note-{stale.pk} >> text=corrected")
    assert page.evaluate("window.notReloaded === true")  # both swapped in place by htmx
    page.wait_for_selector("#search-results >> text=sign-off from Dana")  # refreshed on memory-changed
    results = page.inner_text("#search-results")
    assert "2 matches" in results and "straight to main" not in results and "from Bob" not in results
    screenshot("workspace_06_note_forgotten_and_corrected")

    assert events.latest(NoteForgotten, seat=ana).event.user == "lena"
    assert events.latest(NoteCorrected, seat=ana).event.after == "Billing hotfixes need a sign-off from Dana"
    after = shown_notes(ana, "run-after")
    assert wrong.pk not in after and kept.pk in after
    assert "sign-off from Dana" in prefetch(seat=ana, request=PrefetchRequest(run_id="run-after", ask=ASK))["prompt"]

    page.goto(f"{base}/learning/seats/ana/turns/run-after/")
    page.wait_for_selector("#block-personal_memory")
    shown = page.inner_text("#block-personal_memory")
    assert f"note {kept.pk}" in shown and f"note {wrong.pk}" not in shown and "straight to main" not in shown
    screenshot("workspace_07_turn_what_it_was_shown")

    page.goto(f"{base}/learning/health/trends/")
    page.wait_for_selector("#trend-hits svg")
    screenshot("workspace_08_trends_30_days")
    page.select_option("#trend-window", "7")
    page.wait_for_selector("#trend-hits >> text=last 7 days")
    assert "window=7" in page.url
    screenshot("workspace_09_trends_7_days")
    assert get_user_model().objects.get(username="lena").is_superuser is False
