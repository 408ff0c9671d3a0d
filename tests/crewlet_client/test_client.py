"""The Python client against the real Django app (in-process WSGI transport): one turn end to end,
every error as an exception naming the field, and its models in step with the OpenAPI schema."""

from __future__ import annotations

import httpx2
import pytest
from django.core.handlers.wsgi import WSGIHandler

from crewlet.api import api
from crewlet_client import (
    CrewletClient,
    Forbidden,
    InvalidField,
    Memory,
    NotFound,
    Prefetch,
    ToolResult,
    TurnAccepted,
    Unauthorized,
)
from learning.models import DiaryEntry, Episode, Turn
from tests.factories import operator_token, token_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sync_queue(monkeypatch):
    from django_q.conf import Conf

    monkeypatch.setattr(Conf, "SYNC", True)


def client_for(token: str, seat: str = "ana") -> CrewletClient:
    return CrewletClient("http://testserver", token=token, seat=seat, transport=httpx2.WSGITransport(app=WSGIHandler()))


def test_one_turn_through_the_client_is_stored_and_reflected(seat, sync_queue):
    crewlet = client_for(token_for(seat))
    start = crewlet.prefetch(run_id="run-c1", ask="Ship the 2.4.1 hotfix",
                             interactions=[{"sender": {"handle": "dana", "platform": "slack"},
                                            "body": "Ship the 2.4.1 hotfix"}])
    assert isinstance(start, Prefetch) and start.run_id == "run-c1" and not start.frozen
    assert crewlet.prefetch(run_id="run-c1", ask="Ship the 2.4.1 hotfix").frozen
    openai_tools = crewlet.tools(format="openai")
    assert all(t["function"]["strict"] for t in openai_tools)
    note = crewlet.call_tool("reflect_and_persist", {"content": "Dana wants the CI run linked first.", "kind": "long"},
                             run_id="run-c1")
    assert isinstance(note, ToolResult) and note.ok
    accepted = crewlet.post_turn(run_id="run-c1", conversation_kind="chat", review_outcome="done",
                                 plan_summary="Shipped 2.4.1 and linked the CI run.",
                                 tools_called=["reflect_and_persist", "deploy"], tool_sequence=["reflect_and_persist",
                                                                                                  "deploy"],
                                 interactions=[{"sender": {"handle": "dana", "platform": "slack"},
                                                "body": "Ship the 2.4.1 hotfix"}])
    assert isinstance(accepted, TurnAccepted) and accepted.status == "accepted"
    assert Turn.objects.get(run_id="run-c1").reflected_at is not None
    memory = crewlet.memory()
    assert isinstance(memory, Memory)
    assert memory.diary.items[0]["content"] == DiaryEntry.objects.get().content
    assert memory.episodes.total == Episode.objects.filter(seat=seat).count() == 1
    assert memory.latest_reflection is not None


def test_a_bad_field_raises_invalid_field_naming_it(seat):
    crewlet = client_for(token_for(seat))
    with pytest.raises(InvalidField) as err:
        crewlet.call_tool("reflect_and_persist", {"kind": "long"}, run_id="r")
    assert err.value.field == "arguments.content" and "arguments.content" in str(err.value)
    with pytest.raises(InvalidField) as err:
        crewlet.post_turn(run_id="r", conversation_kind="carrier-pigeon", review_outcome="done")
    assert err.value.fields == ["conversation_kind"]
    with pytest.raises(InvalidField) as err:
        crewlet.prefetch(run_id="   ")
    assert err.value.field == "run_id"


def test_refusals_are_typed(seat, other_seat):
    with pytest.raises(NotFound) as err:
        client_for(token_for(seat)).call_tool("no_such_tool")
    assert err.value.field == "name"
    with pytest.raises(Forbidden):
        client_for(token_for(seat), seat="bo").prefetch(run_id="r")
    with pytest.raises(Forbidden):
        client_for(operator_token(seat.company)).prefetch(run_id="r")
    with pytest.raises(Unauthorized):
        client_for("crw_nope").tools()


@pytest.mark.parametrize("model, path, method", [
    (Prefetch, "/api/v1/agents/{handle}/prefetch", "post"),
    (ToolResult, "/api/v1/agents/{handle}/tools/{name}", "post"),
    (Memory, "/api/v1/agents/{handle}/memory", "get"),
])
def test_the_client_models_follow_the_openapi_schema(model, path, method):
    schema = api.get_openapi_schema()
    ok = next(code for code in schema["paths"][path][method]["responses"] if str(code).startswith("2"))
    ref = schema["paths"][path][method]["responses"][ok]["content"]["application/json"]["schema"]["$ref"]
    component = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert set(component["required"]) == {n for n, f in model.model_fields.items() if f.is_required()}
