"""Headless Debian chromium driven by Playwright against ``live_server``.

A missing chromium skips these tests on a workstation and fails them in CI (``CI=true``);
``.ci/run`` installs it; ``bin/check_test_tools`` says when it is missing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.db import connections

from tests.conftest import IN_CI

CHROMIUM = os.environ.get("CREWLET_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"


@pytest.fixture
def chromium_path():
    if not os.access(CHROMIUM, os.X_OK):
        message = f"{CHROMIUM} is missing (Debian: apt-get install chromium)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return CHROMIUM


@pytest.fixture
def browser_page(chromium_path, monkeypatch):
    """A fresh page in headless chromium; closed (with the browser) after the test."""
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop on this thread; the test only touches the ORM
    # before and after driving the browser, never concurrently with the live server's thread.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.set_default_timeout(15_000)
        page = context.new_page()
        try:
            yield page
        finally:
            context.close()
            browser.close()
            # the test ran its ORM calls in Playwright's greenlet context, which holds its own
            # connection; close it here, or PostgreSQL refuses to drop the test database
            connections.close_all()


@pytest.fixture
def screenshot(browser_page):
    def _shot(name: str) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        browser_page.screenshot(path=str(path), full_page=True)
        return path

    return _shot
