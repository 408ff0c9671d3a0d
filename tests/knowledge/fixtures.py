"""Knowledge fixtures: a fake Confluence, and configs serving each backend (imported by conftests and tests)."""

from __future__ import annotations

import pytest

from crewlet.config import schema
from knowledge.promotion_writer import reset_promotion_writer
from knowledge.searcher import reset_searcher
from tests.fakes.confluence_server import FakeConfluence

ORG_TOKEN_ENV = "CREWLET_TEST_CONFLUENCE_ORG_TOKEN"


@pytest.fixture(autouse=True)
def _fresh_backends():
    reset_searcher()
    reset_promotion_writer()
    yield
    reset_searcher()
    reset_promotion_writer()


@pytest.fixture
def fake_confluence():
    fake = FakeConfluence().start()
    yield fake
    fake.stop()


@pytest.fixture
def serve_native(serve_config):
    def _serve(scope=("ENG", "OPS"), **overrides):
        return serve_config(knowledge=schema.Knowledge(backend="native", scope=list(scope)), **overrides)

    return _serve


@pytest.fixture
def serve_confluence(serve_config, monkeypatch):
    """Serve the Confluence backend at ``url`` with the org token set (unless ``org_token`` is "")."""

    def _serve(url, scope=("ENG", "OPS"), org_token="org-secret", username="crewlet-bot", timeout=5.0, cloud="auto"):
        if org_token:
            monkeypatch.setenv(ORG_TOKEN_ENV, org_token)
        else:
            monkeypatch.delenv(ORG_TOKEN_ENV, raising=False)
        spec = schema.Confluence(url=url, username=username, token_env=ORG_TOKEN_ENV, timeout_seconds=timeout,
                                 cloud=cloud)
        return serve_config(knowledge=schema.Knowledge(backend="confluence", scope=list(scope), confluence=spec))

    return _serve
