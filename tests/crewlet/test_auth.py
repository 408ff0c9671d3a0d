"""Per-seat bearer tokens on the API: a seat reads only itself, an operator its company's seats."""

from __future__ import annotations

from crewlet.models import ApiToken, hash_token
from tests.factories import CompanyFactory, RoleFactory, SeatFactory, UnitFactory, operator_token, token_for


def whoami(api_client, handle, token=None):
    return api_client.get(f"/api/v1/agents/{handle}/whoami", token=token)


def test_no_token_is_401(api_client, seat):
    assert whoami(api_client, "ana").status_code == 401


def test_an_unknown_token_is_401(api_client, seat):
    assert whoami(api_client, "ana", token="crw_not-a-real-token").status_code == 401


def test_a_seat_token_reads_its_own_seat(api_client, seat, seat_token):
    response = whoami(api_client, "ana", token=seat_token)
    assert response.status_code == 200
    assert response.json() == {"handle": "ana", "role": "swe", "unit": "eng", "company": "Acme"}


def test_a_seat_token_naming_another_seat_is_403(api_client, seat, other_seat, seat_token):
    response = whoami(api_client, "bo", token=seat_token)
    assert response.status_code == 403
    assert "ana" in response.json()["detail"]


def test_an_operator_token_reads_any_seat_of_its_company(api_client, seat, other_seat, company):
    token = operator_token(company)
    assert whoami(api_client, "ana", token=token).json()["handle"] == "ana"
    assert whoami(api_client, "bo", token=token).json()["handle"] == "bo"


def test_an_operator_token_cannot_read_another_companys_seat(api_client, seat):
    rival = CompanyFactory(name="Rival")
    SeatFactory(company=rival, handle="zed", role=RoleFactory(company=rival), unit=UnitFactory(company=rival))
    assert whoami(api_client, "zed", token=operator_token(seat.company)).status_code == 404


def test_a_revoked_token_is_401(api_client, seat, seat_token):
    ApiToken.objects.filter(token_hash=hash_token(seat_token)).update(revoked=True)
    assert whoami(api_client, "ana", token=seat_token).status_code == 401


def test_an_inactive_seats_token_is_401(api_client, seat, seat_token):
    seat.active = False
    seat.save()
    assert whoami(api_client, "ana", token=seat_token).status_code == 401


def test_tokens_are_stored_hashed_and_the_raw_value_nowhere(seat):
    raw = token_for(seat)
    row = ApiToken.objects.get(seat=seat)
    assert row.token_hash == hash_token(raw) != raw
    stored = [str(getattr(row, f.attname)) for f in ApiToken._meta.concrete_fields]
    assert not any(raw in value for value in stored)
    assert raw.startswith(row.prefix) and len(row.prefix) < len(raw) // 3
