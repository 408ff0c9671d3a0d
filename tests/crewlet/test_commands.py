"""``manage.py apply_config`` and ``manage.py create_seat_token``."""

from __future__ import annotations

import hashlib
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from crewlet import config
from crewlet.models import ApiToken, ConfigRevision, Seat, hash_token
from tests.crewlet.test_config import EXAMPLE, toml


def run(*args):
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_apply_config_applies_the_file_and_prints_the_summary_and_revision(db, tmp_path):
    path = tmp_path / "crewlet.toml"
    path.write_text(toml())
    out, _err = run("apply_config", str(path))
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    assert f"revision {sha}" in out
    assert "company: Hotco" in out and "seats:   ana" in out
    assert ConfigRevision.objects.get().sha256 == sha
    assert Seat.objects.get(handle="ana").role.name == "swe"


def test_apply_config_refuses_an_invalid_file_naming_the_key_and_keeps_the_previous_revision(db, tmp_path):
    good, bad = tmp_path / "good.toml", tmp_path / "bad.toml"
    good.write_text(toml(refreshes=4))
    bad.write_text(toml(refreshes=4).replace("[seats.ana]", "[seats.ana]\ncolour = 'red'"))
    run("apply_config", str(good))

    err = StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("apply_config", str(bad), stdout=StringIO(), stderr=err)

    assert exited.value.code == 1
    assert err.getvalue().strip().startswith(f"{bad}: seats.ana.colour: unknown key")
    assert ConfigRevision.objects.count() == 1
    assert config.current().learning.personal_memory.max_refreshes_per_turn == 4


def test_apply_config_applies_the_example_file(db):
    out, _err = run("apply_config", str(EXAMPLE))
    assert "company: Acme Robotics" in out and Seat.objects.filter(handle="dee").exists()


def test_apply_config_of_a_missing_file_is_an_error(db, tmp_path):
    with pytest.raises(CommandError, match="cannot read"):
        run("apply_config", str(tmp_path / "nope.toml"))


def test_create_seat_token_prints_the_raw_token_once_and_stores_only_its_hash(api_client, seat):
    out, err = run("create_seat_token", "ana")
    raw = out.strip()
    token = ApiToken.objects.get(seat=seat)
    assert token.kind == ApiToken.SEAT and token.token_hash == hash_token(raw)
    assert raw not in err
    assert api_client.get("/api/v1/agents/ana/whoami", token=raw).status_code == 200


def test_create_seat_token_operator_reads_every_seat_of_the_company(api_client, seat, other_seat):
    raw = run("create_seat_token", "ana", "--operator")[0].strip()
    assert ApiToken.objects.get(token_hash=hash_token(raw)).kind == ApiToken.OPERATOR
    assert api_client.get("/api/v1/agents/bo/whoami", token=raw).json()["handle"] == "bo"


def test_create_seat_token_for_an_unknown_handle_is_an_error(db):
    with pytest.raises(CommandError, match="no seat with handle 'ghost'"):
        run("create_seat_token", "ghost")
    assert not ApiToken.objects.exists()


def test_apply_config_prints_every_refused_key_one_a_line(db, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(toml().replace("[seats.ana]", "[learning.skill_curator]\ninterval_hours = 0\n\n[seats.ana]\ncolour = 'red'"))
    err = StringIO()
    with pytest.raises(SystemExit):
        call_command("apply_config", str(bad), stdout=StringIO(), stderr=err)
    assert err.getvalue().splitlines() == [
        f"{bad}: learning.skill_curator.interval_hours: must be at least 1, got 0",
        f"{bad}: seats.ana.colour: unknown key (known: role, unit, display_name, token_budget, active, mcp_env)",
    ]
