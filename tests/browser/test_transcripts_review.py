"""A lead (not a superuser) reviews transcript lessons and recommendations in a real browser.

The lead sees each shard with its source sessions and ladder reason, submits one to the judge,
rejects another, reads a recommendation's rendered diff, approves it (0 bytes written) and installs
an additive one. The forms offer no way to set a status, a mode or a target path.
Screenshots land in var/screenshots/.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from learning.review import leads
from learning.transcripts.ingest import ingest
from learning.transcripts.models import Recommendation, Shard
from tests.factories import CompanyFactory, RoleFactory, SeatFactory
from tests.review_fixtures import LEAD_PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "transcripts"


def _run_action(page, value: str, action: str):
    page.check(f'input[name="_selected_action"][value="{value}"]')
    page.select_option('select[name="action"]', action)
    page.click('button[name="index"]')


def test_a_lead_reviews_shards_and_recommendations(live_server, browser_page, screenshot, tmp_path):
    company = CompanyFactory()
    seat = SeatFactory(company=company, role=RoleFactory(company=company, name="swe"), handle="ana")
    ingest(paths=[str(FIXTURES)], seat=seat, repo=str(tmp_path))
    lead = leads.create_lead(username="lena", password=LEAD_PASSWORD)
    assert not lead.is_superuser
    pending = list(Shard.objects.filter(status__in=(Shard.PENDING, Shard.REVIEW)).order_by("pk"))
    to_publish, to_reject = pending[0], pending[1]
    page, base = browser_page, live_server.url

    page.goto(f"{base}/admin/login/?next=/admin/transcripts/shard/")
    page.fill("#id_username", "lena")
    page.fill("#id_password", LEAD_PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("text=source sessions")
    listing = page.inner_text("#result_list")
    assert to_publish.session_id in listing and to_publish.reason in listing
    screenshot("transcripts_01_shards")

    page.goto(f"{base}/admin/transcripts/shard/{to_publish.pk}/change/")
    assert page.locator('[name="status"]').count() == 0 and page.locator('[name="text"]').count() == 0
    assert to_publish.reason in page.inner_text("body")
    screenshot("transcripts_02_shard")

    page.goto(f"{base}/admin/transcripts/shard/")
    _run_action(page, str(to_publish.pk), "publish")
    page.wait_for_selector(f"text=#{to_publish.pk}: publish_memory")
    _run_action(page, str(to_reject.pk), "reject")
    page.wait_for_selector(f"text=#{to_reject.pk}: reject_memory → rejected")
    to_publish.refresh_from_db()
    to_reject.refresh_from_db()
    assert to_publish.status in (Shard.PUBLISHED, Shard.NOT_KEPT) and to_publish.judge_verdict
    assert to_reject.status == Shard.REJECTED and to_reject.rejected_by == Shard.BY_PERSON
    screenshot("transcripts_03_actions")

    edit = Recommendation.objects.filter(mode=Recommendation.EDIT).first()
    page.goto(f"{base}/admin/transcripts/recommendation/{edit.pk}/change/")
    body = page.inner_text("body")
    assert f"+++ b/{edit.target_path}" in body
    assert all(page.locator(f'[name="{f}"]').count() == 0 for f in ("status", "mode", "target_path"))
    screenshot("transcripts_04_diff")
    target = tmp_path / edit.target_path
    before = target.read_bytes() if target.exists() else None
    page.goto(f"{base}/admin/transcripts/recommendation/")
    _run_action(page, str(edit.pk), "approve")
    page.wait_for_selector(f"text=#{edit.pk}: approve → approved (wrote 0 bytes)")
    assert (target.read_bytes() if target.exists() else None) == before

    create = Recommendation.objects.filter(mode=Recommendation.CREATE).first()
    _run_action(page, str(create.pk), "approve")
    page.wait_for_selector(f"text=#{create.pk}: approve → approved")
    _run_action(page, str(create.pk), "install_file")
    page.wait_for_selector(f"text=#{create.pk}: install → installed")
    assert (tmp_path / create.target_path).read_text() == create.contents
    screenshot("transcripts_05_installed")
