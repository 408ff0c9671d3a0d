"""A lead's first hour on the demo's database, in a real browser, logged in as the demo's lead (not a
superuser): publish the promoted draft and an agent finds it; search a seat's memory by words; read
what a demo turn was shown; read the prefetch hit rates of a seat whose knowledge search found nothing.

The database is built by the demo's own steps (the example config with the hashing embedder).
Screenshots land in var/screenshots/ as demo_*.png.
"""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management.base import OutputWrapper
from django.core.management.color import no_style
from django.test import Client

from demo import foundation, knowledge, passes, prefetch, reflection
from demo.state import DemoContext
from knowledge.models import Page
from tests.crewlet.test_config import EXAMPLE

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def demo(settings, tmp_path):
    """The demo's database (every step but the transcripts'), and its context (the seats' tokens)."""
    from crewlet import config

    path = tmp_path / "crewlet.toml"
    path.write_text(EXAMPLE.read_text().replace('kind = "local" ', 'kind = "hashing"'))
    settings.CREWLET_CONFIG_PATH = str(path)
    config.use(None)
    ctx = DemoContext(out=OutputWrapper(StringIO()), style=no_style())
    for step in (foundation, reflection, prefetch, passes, knowledge):
        step.run(ctx)
    assert not get_user_model().objects.get(username=knowledge.LEAD_USERNAME).is_superuser
    yield ctx
    config.use(None)


def log_in(page, base, next_path):
    page.goto(f"{base}/admin/login/?next={next_path}")
    page.fill("#id_username", knowledge.LEAD_USERNAME)
    page.fill("#id_password", knowledge.LEAD_PASSWORD)
    page.click("input[type=submit]")


def search_knowledge(ctx, handle: str, query: str) -> str:
    """The agent's own call: POST /agents/{handle}/tools/search_knowledge with its token."""
    response = Client().post(f"/api/v1/agents/{handle}/tools/search_knowledge", json.dumps(
        {"run_id": f"run-{handle}-kb", "arguments": {"query": query}}), content_type="application/json", secure=True,
        HTTP_AUTHORIZATION=f"Bearer {ctx.tokens[handle]}")
    assert response.status_code == 200, response.content
    return response.json()["text"]


def test_a_lead_publishes_the_demos_draft_and_the_converging_seats_find_it(demo, live_server, browser_page, screenshot):
    page, base = browser_page, live_server.url
    (draft,) = Page.objects.filter(state=Page.DRAFT).exclude(title="Auto-Drafted Skills")
    assert "Call open_pr" not in search_knowledge(demo, "bo", "open a PR and ask for review")

    log_in(page, base, "/admin/knowledge/draftpage/")
    page.click(f"text={draft.title}")
    page.wait_for_selector("#publish-draft")
    screenshot("demo_01_draft")
    page.click("#publish-draft")
    message = page.inner_text(".messagelist")
    assert "to PLAT; the agents of ana, bo, cy, dee, ed can now find it with search_knowledge" in message
    screenshot("demo_02_published")

    published = Page.objects.get(pk=draft.pk)
    for handle in ("ana", "bo", "dee"):  # the seats it came from, and a seat of another unit
        assert published.title in search_knowledge(demo, handle, "open a PR and ask for review"), handle


def test_a_lead_searches_a_seats_memory_by_words(demo, live_server, browser_page, screenshot):
    page, base = browser_page, live_server.url
    log_in(page, base, "/learning/seats/ana/memory/")
    page.fill("#memory-search", "migration staging deploy")  # one note holds all three words, in another order
    page.press("#memory-search", "Enter")
    page.wait_for_selector("#search-counts")
    results = page.inner_text("#search-results")
    assert "The staging deploy fails when a migration locks the orders table" in results
    assert "match" in results and page.inner_text("#search-counts").split(" ")[1].startswith("note")
    screenshot("demo_03_memory_search")


def test_a_demo_turn_shows_what_it_was_shown(demo, live_server, browser_page, screenshot):
    page, base = browser_page, live_server.url
    log_in(page, base, "/learning/seats/ana/turns/demo-ana-04/")
    page.wait_for_selector("#what-it-was-shown")
    shown = page.inner_text("#what-it-was-shown")
    assert "no longer kept" not in shown
    assert "Personal memory" in shown or "Similar prior work" in shown
    assert page.inner_text("#turn-ask .asked-label") == "ASKED" or "Asked" in page.inner_text("#turn-ask")
    screenshot("demo_04_turn_shown")


def test_the_health_page_counts_a_knowledge_search_that_found_nothing_as_a_miss(demo, live_server, browser_page,
                                                                                 screenshot):
    page, base = browser_page, live_server.url
    Page.objects.filter(state=Page.PUBLISHED).delete()  # a seat whose read scope holds no page
    Client().post("/api/v1/agents/dee/prefetch", json.dumps({"run_id": "run-dee-1", "ask": "the cache cluster is paging"}),
                  content_type="application/json", secure=True, HTTP_AUTHORIZATION=f"Bearer {demo.tokens['dee']}")
    log_in(page, base, "/learning/health/?seat=dee")
    page.wait_for_selector("#prefetch-rates")
    rates = page.inner_text("#prefetch-rates")
    assert "relevant_knowledge" in rates
    caption = page.locator("#prefetch-rates g.bar", has_text="relevant_knowledge").locator(".caption").text_content()
    assert caption.startswith("0% of "), caption
    screenshot("demo_05_health_no_pages")
