"""Editing crewlet.toml in the admin in a real browser, as lead ``lena`` who is not a superuser.

A refused edit names every key path (a misspelt key with its did-you-mean, and interval_hours = 0),
keeps her text in the editor and writes nothing; the corrected edit is applied and written; the
admin index lists it under Recent actions. Screenshots land in var/screenshots/ (config_*.png).
"""

from __future__ import annotations

import pytest

from crewlet import config
from crewlet.models import ConfigRevision
from learning.review import leads
from tests.crewlet.test_config_admin import GOOD, REFUSED
from tests.review_fixtures import LEAD_PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def config_file(settings, tmp_path):
    path = tmp_path / "crewlet.toml"
    path.write_text(GOOD, encoding="utf-8")
    settings.CREWLET_CONFIG_PATH = str(path)
    config.use(None)
    config.current()
    return path


def test_a_refused_config_edit_names_every_key_then_the_fixed_one_is_applied(live_server, browser_page, screenshot,
                                                                           config_file):
    lead = leads.create_lead(username="lena", password=LEAD_PASSWORD)
    assert not lead.is_superuser
    serving = config.revision()[:12]
    page, base = browser_page, live_server.url

    page.goto(f"{base}/admin/login/?next=/admin/crewlet/configrevision/")
    page.fill("#id_username", "lena")
    page.fill("#id_password", LEAD_PASSWORD)
    page.click("input[type=submit]")
    page.click("a.addlink")
    page.wait_for_selector("#id_content")
    assert page.input_value("#id_content").strip() == GOOD.strip()

    page.fill("#id_content", REFUSED)
    page.click("#config-apply")
    page.wait_for_selector("#config-refused")
    refusal = page.inner_text("#config-refused")
    assert f"Refused; nothing was written and revision {serving} keeps serving." in refusal
    assert ("learning.personal_memory.max_refresh_per_turn: unknown key, did you mean `max_refreshes_per_turn`?"
            in refusal)
    assert "learning.skill_curator.interval_hours: must be at least 1, got 0" in refusal
    assert page.input_value("#id_content").replace("\r\n", "\n") == REFUSED  # her text is kept
    screenshot("config_01_refused_with_key_paths")
    assert config_file.read_text(encoding="utf-8") == GOOD and ConfigRevision.objects.count() == 1

    fixed = GOOD.replace("interval_hours = 24", "interval_hours = 12")
    page.fill("#id_content", fixed)
    page.click("#config-apply")
    page.wait_for_selector("#applied-revision")
    screenshot("config_02_applied")
    assert config_file.read_text(encoding="utf-8") == fixed
    assert config.current().learning.skill_curator.interval_hours == 12
    revision = ConfigRevision.objects.first()
    assert page.inner_text("#applied-revision") == revision.sha256[:12]

    page.goto(f"{base}/admin/")
    recent = page.inner_text("#recent-actions-module")
    assert str(revision) in recent
    screenshot("config_03_recent_actions")
