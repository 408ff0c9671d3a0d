"""``/api/v1/docs`` renders in a real browser from the bundled Swagger UI (no CDN: the test's
chromium has no network), listing the routes an integrator calls."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_api_docs_page_shows_every_route_from_bundled_assets(live_server, browser_page, screenshot):
    page = browser_page
    fetched = []
    page.on("request", lambda request: fetched.append(request.url))
    page.goto(f"{live_server.url}/api/v1/docs")
    page.wait_for_selector(".opblock-summary-path", timeout=15_000)
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    for route in ("/api/v1/turns", "/api/v1/agents/{handle}/prefetch", "/api/v1/tools",
                  "/api/v1/agents/{handle}/tools/{name}", "/api/v1/agents/{handle}/memory"):
        assert any(route in p.replace("\u200b", "") for p in paths), (route, paths)
    assert page.locator(".info .title").inner_text().startswith("Crewlet learning")
    assert all(url.startswith(live_server.url) for url in fetched), [u for u in fetched
                                                                    if not u.startswith(live_server.url)]
    screenshot("api-docs")
