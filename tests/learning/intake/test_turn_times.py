"""A time in the turn record is an ISO 8601 string, as the schema says; a number is a 422 naming it
(schemathesis found it accepted, read as a Unix timestamp, once the schema carried real examples)."""

import pytest

from tests.learning.reflection.conftest import record


@pytest.mark.parametrize("value", [0, 1712345678, 1.5])
def test_a_numeric_time_is_refused_naming_the_field(seat, seat_token, api_client, value):
    body = {**record(seat), "started_at": value}
    response = api_client.post("/api/v1/turns", body, token=seat_token)
    assert response.status_code == 422
    assert [e["field"] for e in response.json()["errors"]] == ["started_at"]


def test_an_iso_time_is_accepted(seat, seat_token, api_client):
    body = {**record(seat), "started_at": "2026-12-03T07:00:00+00:00", "ended_at": "2026-12-03T07:01:00Z"}
    assert api_client.post("/api/v1/turns", body, token=seat_token).status_code == 202
