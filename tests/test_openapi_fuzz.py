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
from schemathesis.specs.openapi.checks import positive_data_acceptance

from crewlet.wsgi import application


def served(environ, start_response):
    """The app as a WSGI server runs it: the response closed once its body is read (werkzeug's test client,
    which schemathesis calls through, leaves that to whoever holds the response)."""
    response = application(environ, start_response)
    try:
        return [b"".join(response)]
    finally:
        response.close()


schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", served)

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
    from tests.learning.memory.rows import episode, note, skill

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


def _negative(case, location: str) -> bool:
    """Schemathesis made this part of the request invalid on purpose: leave it as generated."""
    info = (case.meta.components if case.meta else {}).get(location)
    return info is not None and info.mode == "negative"


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_every_answer_is_declared_and_no_input_is_answered_500(case, fuzz_seat, same_connection_per_request):
    params = case.path_parameters or {}
    if not _negative(case, "path"):
        if "handle" in params:
            params["handle"] = "ana"
        if "name" in params:
            params["name"] = fuzz_seat["tools"][len(str(params["name"])) % len(fuzz_seat["tools"])]
    token = fuzz_seat["operator"] if case.path.startswith("/api/v1/memory/overview") else fuzz_seat["seat"]
    headers = {} if _negative(case, "header") else {"Authorization": f"Bearer {token}"}
    # every check: no 5xx, every status answered is declared, every body matches its schema, and
    # schema-violating input is refused (ST201). Not ST202: some valid-looking input is refused by a
    # rule a JSON schema cannot state (a sender needs a handle or an external id; a tool's own
    # arguments), and that refusal is a declared 422.
    case.call_and_validate(headers=headers, excluded_checks=[positive_data_acceptance])
