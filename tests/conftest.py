"""Shared fixtures. Every test runs on PostgreSQL: ``DATABASE_URL``, else a throwaway embedded server
(tests/settings.py).

Unit tests serve a config with the offline provider and the hashing embedder; the few tests
marked ``real_model`` load the packaged sentence-embedding model.
"""

from __future__ import annotations

import os
import socket
from urllib.parse import quote

import pytest

from crewlet import config
from crewlet.config import schema
from tests.factories import CompanyFactory, RoleFactory, SeatFactory, UnitFactory, token_for

IN_CI = os.environ.get("CI", "").lower() == "true"
LATE_CALL_WAIT_SECONDS = 60.0  # longer than any fake provider a test slows down

pytest_plugins = [
    "tests.review_fixtures",  # lead, staff_user (the leads' review tests)
    "tests.knowledge.fixtures",  # serve_native, serve_confluence, fake_confluence; fresh knowledge backends
]


def test_config(**overrides) -> schema.Config:
    """The config unit tests serve: offline + scripted providers, hashing embeddings."""
    base = dict(
        providers=schema.Providers(
            llm={"offline": schema.ProviderSpec(kind="offline"), "scripted": schema.ProviderSpec(kind="scripted")},
            embeddings=schema.EmbeddingSpec(kind="hashing", model="hashing-256", dimensions=256),
        )
    )
    base.update(overrides)
    return schema.Config(**base)


@pytest.fixture(scope="session", autouse=True)
def _plain_http():
    """The test client and live_server speak plain HTTP: no redirect to HTTPS (production settings redirect).
    Set for the session, before live_server builds its middleware (which reads the setting once)."""
    from django.conf import settings

    settings.SECURE_SSL_REDIRECT = False


@pytest.fixture(autouse=True)
def _serve_test_config():
    from core.providers.embeddings import reset_embedder
    from core.providers.llm import reset_providers
    from core.providers.llm.scripted import ScriptedProvider

    config.use(test_config())
    reset_embedder()
    reset_providers()
    ScriptedProvider.reset()
    yield
    config.use(None)
    reset_embedder()
    ScriptedProvider.reset()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """After each test's teardown (its database rolled back or flushed), wait for every auxiliary
    call it left running past a deadline: one still out would take the next test's scripted
    answers. A call that never returns fails the test that left it."""
    from core import late_spend

    result = yield
    left = late_spend.wait(LATE_CALL_WAIT_SECONDS)
    if left:
        pytest.fail(f"{left} late auxiliary call(s) left by this test never returned in {LATE_CALL_WAIT_SECONDS:.0f} s")
    return result


@pytest.fixture
def serve_config():
    """Serve a config built from keyword overrides of ``test_config``: ``serve_config(learning=...)``."""

    def _serve(**overrides):
        cfg = test_config(**overrides)
        config.use(cfg)
        return cfg

    return _serve


@pytest.fixture
def company(db):
    return CompanyFactory()


@pytest.fixture
def unit(company):
    return UnitFactory(company=company, key="eng", knowledge_container="ENG")


@pytest.fixture
def role(company):
    return RoleFactory(company=company, name="swe")


@pytest.fixture
def seat(company, role, unit):
    return SeatFactory(company=company, role=role, unit=unit, handle="ana")


@pytest.fixture
def other_seat(company, role, unit):
    return SeatFactory(company=company, role=role, unit=unit, handle="bo")


@pytest.fixture
def seat_token(seat):
    return token_for(seat)


@pytest.fixture
def api_client(client):
    """Django test client with a ``bearer(token)`` helper for JSON calls."""

    class _Api:
        def __init__(self, django_client):
            self.c = django_client

        def _h(self, token):
            return {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}

        def get(self, path, token=None, **params):
            return self.c.get(path, params, **self._h(token))

        def post(self, path, body=None, token=None):
            import json

            return self.c.post(path, json.dumps(body if body is not None else {}), content_type="application/json", **self._h(token))

    return _Api(client)


def redis_available(host="127.0.0.1", port=6379) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


@pytest.fixture
def require_redis():
    if not redis_available():
        if IN_CI:
            pytest.fail("Redis on 127.0.0.1:6379 is required in CI and is not reachable")
        pytest.skip("Redis on 127.0.0.1:6379 is not reachable")


@pytest.fixture
def empty_database():
    """The URL of a new, empty database on the test server, dropped after the test."""
    import uuid

    import psycopg
    from django.db import connection
    from psycopg import sql

    s = connection.settings_dict
    name = f"crewlet_empty_{uuid.uuid4().hex[:12]}"
    params = dict(host=s["HOST"] or None, port=s["PORT"] or None, user=s["USER"] or None, password=s["PASSWORD"] or None)
    with psycopg.connect(dbname="postgres", autocommit=True, **params) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    auth = quote(s["USER"] or "", safe="") + (f":{quote(s['PASSWORD'], safe='')}" if s.get("PASSWORD") else "")
    port = f":{s['PORT']}" if s.get("PORT") else ""
    yield f"postgres://{auth}@{quote(s['HOST'] or 'localhost', safe='')}{port}/{name}"
    with psycopg.connect(dbname="postgres", autocommit=True, **params) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture
def local_embedder(serve_config):
    """The packaged local model (all-MiniLM-L6-v2) serving embeddings, loaded for the test, with the
    offline chat provider: for tests of what real vectors find."""
    from core.providers.embeddings import get_embedder, reset_embedder

    serve_config(providers=schema.Providers(llm={"offline": schema.ProviderSpec(kind="offline")},
                                            embeddings=schema.EmbeddingSpec(kind="local")))
    reset_embedder()
    get_embedder().load()
    yield
    reset_embedder()
