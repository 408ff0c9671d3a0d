"""The token check: one indexed SELECT on the sha256 hash, loading the seat rows the route reads."""

from __future__ import annotations

from datetime import timedelta

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from crewlet.models import ApiToken, Seat, hash_token
from crewlet.tokens import authenticate
from tests.factories import operator_token, token_for


def fields(instance) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in type(instance)._meta.concrete_fields}


def test_the_token_and_its_seat_role_unit_and_company_load_in_one_statement_as_the_orm_loads_them(seat):
    raw = token_for(seat)
    ApiToken.objects.update(last_used_at=timezone.now(), expires_at=timezone.now() + timedelta(days=3))
    expected = ApiToken.objects.select_related("seat", "seat__role", "seat__unit", "seat__company").get()

    with CaptureQueriesContext(connection) as queries:
        token = authenticate(raw)
        assert token is not None
        graph = (token, token.seat, token.seat.role, token.seat.unit, token.seat.company)

    assert len(queries.captured_queries) == 1  # no lazy load afterwards either: all of it was cached
    sql = queries.captured_queries[0]["sql"]
    assert "ORDER BY" not in sql and "LIMIT" not in sql and hash_token(raw) in sql
    wanted = (expected, expected.seat, expected.seat.role, expected.seat.unit, expected.seat.company)
    for got, want in zip(graph, wanted, strict=True):
        assert type(got) is type(want) and fields(got) == fields(want)  # JSON, datetimes, booleans converted
    assert isinstance(token.seat.role.tools, list) and token.expires_at.tzinfo is not None
    assert token.seat._state.adding is False and token.seat._state.db == "default"


def test_posting_a_turn_checks_its_token_with_the_seat_row_alone(seat, seat_token, api_client):
    from tests.learning.reflection.conftest import record

    ApiToken.objects.update(last_used_at=timezone.now())  # used within the minute: no stamp to write
    with CaptureQueriesContext(connection) as queries:
        assert api_client.post("/api/v1/turns", record(seat), token=seat_token).status_code == 202
    lookup = next(q["sql"] for q in queries.captured_queries if '"crewlet_apitoken"' in q["sql"])
    assert '"crewlet_seat"' in lookup
    assert not any(table in lookup for table in ('"crewlet_role"', '"crewlet_unit"', '"crewlet_company"'))


def test_an_operator_token_loads_with_no_seat(company):
    token = authenticate(operator_token(company))
    assert token is not None and token.kind == ApiToken.OPERATOR
    assert token.seat is None and token.own_seat is None and token.company == company


def test_a_seat_without_role_or_unit_loads_them_as_none(seat):
    raw = token_for(seat)
    Seat.objects.filter(pk=seat.pk).update(role=None, unit=None)
    ApiToken.objects.update(last_used_at=timezone.now())  # used within the minute: no stamp to write
    with CaptureQueriesContext(connection) as queries:
        token = authenticate(raw)
        assert token is not None and token.seat.role is None and token.seat.unit is None
    assert len(queries.captured_queries) == 1


def test_revoked_expired_and_unknown_tokens_are_not_found(seat):
    revoked, expired, live = token_for(seat), token_for(seat), token_for(seat)
    ApiToken.objects.filter(token_hash=hash_token(revoked)).update(revoked=True)
    ApiToken.objects.filter(token_hash=hash_token(expired)).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert authenticate(revoked) is None and authenticate(expired) is None and authenticate("crw_unknown") is None
    assert authenticate(live) is not None
