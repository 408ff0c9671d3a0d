"""``manage.py probe_model ROLE`` against the fake OpenAI-compatible server in each of its modes."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from core import purposes
from core.models import Event
from crewlet.config import schema
from tests.core.providers.helpers import OPENAI_KEY, OPENAI_KEY_ENV, openai_spec
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.purpose_responder import ideal_answers

PURPOSES = 14

# mode -> (purposes parsed, how each ended)
EXPECTED = {
    "": (PURPOSES, "stop"),
    "rejects_response_format": (PURPOSES, "stop"),
    "rejects_max_tokens": (PURPOSES, "stop"),
    "rate_limited_once": (PURPOSES, "stop"),
    "length": (0, "truncated (length)"),
    "reasoning_only": (0, "truncated (stop)"),
}


def probe(serve_config, seat, monkeypatch, mode: str) -> tuple[str, FakeOpenAIServer]:
    monkeypatch.setenv(OPENAI_KEY_ENV, OPENAI_KEY)
    server = FakeOpenAIServer(mode=mode, responder=ideal_answers()).start()
    server.api_key = OPENAI_KEY
    llm = {"candidate": openai_spec(server)}
    serve_config(providers=schema.Providers(llm=llm, embeddings=schema.EmbeddingSpec(kind="hashing", dimensions=256)))
    seat.role.llm_auxiliary = ["candidate"]
    seat.role.save()
    out = io.StringIO()
    try:
        call_command("probe_model", seat.role.name, stdout=out)
    except CommandError as exc:
        out.write(f"CommandError: {exc}\n")
    finally:
        server.close()
    return out.getvalue(), server


@pytest.mark.parametrize("mode", list(EXPECTED))
def test_probe_reports_each_purpose_against_each_fake_server_mode(serve_config, seat, monkeypatch, mode):
    text, server = probe(serve_config, seat, monkeypatch, mode)
    print(f"\n--- mode {mode or 'ok'} ---\n{text}")  # docs/providers.md quotes these

    parsed, ended = EXPECTED[mode]
    names = set(purposes.all_purposes())
    rows = [line.split() for line in text.splitlines() if line.split() and line.split()[0] in names]
    assert len(rows) == PURPOSES
    assert sum(1 for row in rows if row[1] == "yes") == parsed
    assert all(" ".join(row[2:-4]) == ended for row in rows), rows
    assert f"{parsed} of {PURPOSES} purposes parsed (charged to {seat.handle}, stage operator)" in text
    assert ("CommandError" in text) == (parsed < PURPOSES)
    spend = Event.objects.filter(name="auxiliary_spend", payload__stage="operator")
    assert spend.count() == PURPOSES  # one charged record per purpose, failed ones included
    extra = {"rejects_response_format": 1, "rejects_max_tokens": 1, "rate_limited_once": 1}.get(mode, 0)
    assert len(server.requests) == PURPOSES + extra


def test_probe_of_an_unknown_role_or_purpose_is_a_clear_error(seat):
    with pytest.raises(CommandError, match="no such role"):
        call_command("probe_model", "no-such-role")
    with pytest.raises(CommandError, match="no purpose named 'x'"):
        call_command("probe_model", seat.role.name, "--purpose", "x")
