"""Schemathesis over the OpenAPI schema, against the Django app through its WSGI support.

Every operation the schema lists is called with schema-valid inputs (and a seat token); no input
the schema allows may be answered 500. Bounded to a few dozen examples an operation so the run
finishes well inside a minute. The seat handle in paths is pinned to the token's own seat, and a
tool name is drawn from the registry, so generated inputs reach the code behind the auth checks.
"""

from __future__ import annotations

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from hypothesis import HealthCheck, settings

from crewlet.wsgi import application

schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", application)

MAX_EXAMPLES = 25


@pytest.fixture
def fuzz_seat(db):
    from learning import tools
    from tests.factories import (
        CompanyFactory,
        RoleFactory,
        SeatFactory,
        UnitFactory,
        operator_token,
        token_for,
    )
    from tests.learning.memory_rows import episode, note, skill

    company = CompanyFactory()
    role = RoleFactory(company=company, name="swe", tools=list(tools.REGISTRY))
    seat = SeatFactory(company=company, role=role, unit=UnitFactory(company=company, key="eng"), handle="ana")
    note(seat, "The billing export runs nightly at 02:00")
    episode(seat, ask="fix the billing export", did="restarted it", run_id="old-1", conversation_id="c-1")
    skill(seat, "deploy", "ship the service")
    return {"seat": token_for(seat), "operator": operator_token(company), "tools": sorted(tools.REGISTRY)}


@pytest.fixture
def same_connection_per_request():
    """As Django's test client does: a request must not close the test's transaction-held connection."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_no_schema_valid_input_is_answered_500(case, fuzz_seat, same_connection_per_request):
    params = case.path_parameters or {}
    if "handle" in params:
        params["handle"] = "ana"
    if "name" in params:
        params["name"] = fuzz_seat["tools"][len(str(params["name"])) % len(fuzz_seat["tools"])]
    token = fuzz_seat["operator"] if case.path.startswith("/api/v1/memory/overview") else fuzz_seat["seat"]
    response = case.call(headers={"Authorization": f"Bearer {token}"})
    assert response.status_code < 500, f"{case.method} {case.formatted_path}: {response.status_code} {response.text[:500]}"
