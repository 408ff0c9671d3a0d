"""Bad input over every route and every field: a 4xx JSON answer naming the field, never a 500.

The table is built from the published OpenAPI schema (and each builtin's argument schema), so a
route or field added later is covered without editing this file: every text field gets a NUL, a
lone surrogate and one character past its documented ``maxLength``; every list one item past its
``maxItems``; every number one past its ``maximum`` and every time past the latest one the code can
store and compute with. A field the schema leaves uncapped fails the test by itself, and so does a field
the schema does not declare.
"""

from __future__ import annotations

import copy
import json

import pytest

from crewlet.api import api
from learning import tools
from learning.limits import LATEST_TIME
from tests.factories import operator_token, token_for
from tests.learning.reflection.conftest import record

SCHEMA = api.get_openapi_schema()
COMPONENTS = SCHEMA["components"]["schemas"]
PREFIX = "/api/v1"

TOOL_ARGS = {
    "query_episodes": {"query": "billing export"},
    "reflect_and_persist": {"content": "The export runs nightly", "kind": "long"},
    "refresh_memory": {"context_hint": "billing export"},
    "refine_skill": {"skill_name": "deploy", "content": "1. ship it"},
    "use_skill": {"name": "deploy"},
    "mark_onboarded": {},
    "search_knowledge": {"query": "billing"},
}


def _resolve(schema: dict) -> dict:
    while "$ref" in schema:
        schema = COMPONENTS[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def capped_fields(schema: dict, path: tuple = ()):
    """Every (path, kind, cap) below ``schema``: kind is text, list or object; cap None when uncapped."""
    schema = _resolve(schema)
    for option in schema.get("anyOf", []) + schema.get("allOf", []):
        yield from capped_fields(option, path)
    kind = schema.get("type")
    if kind == "string" and schema.get("format") == "date-time":
        yield path, "time", LATEST_TIME
    elif kind == "string" and "enum" not in schema and "format" not in schema and "const" not in schema:
        yield path, "text", schema.get("maxLength")
    elif kind in ("integer", "number"):
        yield path, "number", schema.get("maximum")
    elif kind == "array":
        yield path, "list", schema.get("maxItems")
        yield from capped_fields(schema.get("items", {}), (*path, 0))
    elif kind == "object":
        if "properties" not in schema:
            yield path, "object", schema.get("maxProperties")
        for name, prop in schema.get("properties", {}).items():
            yield from capped_fields(prop, (*path, name))


def body_schema(method: str, path: str) -> dict | None:
    body = SCHEMA["paths"][path][method].get("requestBody")
    return body["content"]["application/json"]["schema"] if body else None


@pytest.fixture
def world(seat, company):
    from tests.learning.memory.rows import skill

    seat.role.tools = list(tools.REGISTRY)
    seat.role.save()
    skill(seat, "deploy", "ship the service")
    return {"seat": token_for(seat), "operator": operator_token(company), "handle": seat.handle}


def valid_bodies(seat) -> dict[tuple[str, str], dict]:
    """A valid body for each body-taking route, each list holding one item (so it can be over-filled)."""
    turn = record(seat)
    turn.update(tool_sequence=["deploy"], tools_called=["deploy"], skills_offered=[1])
    interaction = {"sender": {"handle": "maya", "platform": "chat"}, "body": "is the export done?"}
    prefetch = {
        "run_id": "run-bad-1", "ask": "is the export done?", "interactions": [interaction],
        "conversation_id": "c-1", "conversation_kind": "chat", "tools": ["query_episodes"],
        "thread": {"status": "read", "messages": [{"sender_name": "Maya", "sender_handle": "maya", "text": "hi", "ts": "1"}]},
    }
    return {
        ("post", "/api/v1/turns"): turn,
        ("post", "/api/v1/agents/{handle}/prefetch"): prefetch,
        ("post", "/api/v1/transcripts/recommendations/{recommendation_id}/review"): {"approve": True},
        **{("post", f"/api/v1/agents/{{handle}}/tools/{name}"): {"run_id": "run-bad-1", "arguments": args}
           for name, args in TOOL_ARGS.items()},
    }


def _set(body: dict, path: tuple, value) -> dict:
    body = copy.deepcopy(body)
    target = body
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return body


def _get(body: dict, path: tuple):
    for key in path:
        body = body[key]
    return body


def bad_values(kind: str, cap: int | None, current):
    if kind == "text":
        yield "NUL", "before\x00after"
        yield "lone surrogate", "before\ud800after"
        yield "over-long", "x" * (cap + 1)
    elif kind == "list":
        yield "too many items", [current[0]] * (cap + 1)
    elif kind == "object":
        yield "too many keys", {f"k{i}": 1 for i in range(cap + 1)}
    elif kind == "number":
        yield "over its maximum", cap + 1
        yield "far over its maximum", 10**20
    elif kind == "time":
        yield "past the latest time", "9999-12-31T23:59:59-05:00"
        yield "before the earliest time", "0001-01-01T00:00:00+05:00"


def body_cases():
    """(route, body path, field name as the 422 names it, what is wrong) for every capped body field."""
    for path, ops in SCHEMA["paths"].items():
        for method in ops:
            schema = body_schema(method, path)
            if schema is None:
                continue
            routes = [path.replace("{name}", n) for n in TOOL_ARGS] if "{name}" in path else [path]
            for route in routes:
                fields = list(capped_fields(schema))
                if "{name}" in path:
                    tool = route.rsplit("/", 1)[-1]
                    params = tools.REGISTRY[tool].definition()["parameters"]
                    fields = [f for f in fields if f[0] != ("arguments",)]
                    fields += [(("arguments", *p), k, c) for p, k, c in capped_fields(params)]
                for field_path, kind, cap in fields:
                    yield pytest.param(method, route, field_path, kind, cap,
                                       id=f"{method} {route} {'.'.join(map(str, field_path))} {kind}")


@pytest.mark.parametrize(("method", "route", "field_path", "kind", "cap"), list(body_cases()))
def test_each_bad_body_field_is_refused_422_naming_it(method, route, field_path, kind, cap, world, seat, api_client):
    assert cap is not None, f"{route} {'.'.join(map(str, field_path))} has no documented cap"
    template = route if "/tools/" not in route else "/api/v1/agents/{handle}/tools/" + route.rsplit("/", 1)[-1]
    base = valid_bodies(seat)[(method, template)]
    url = route.replace("{handle}", seat.handle).replace("{recommendation_id}", "1")
    token = world["operator"] if "/recommendations/" in route else world["seat"]
    named = ".".join(map(str, field_path))
    for what, value in bad_values(kind, cap, _get(base, field_path) if kind == "list" else None):
        response = api_client.post(url, _set(base, field_path, value), token=token)
        assert response.status_code == 422, f"{named} {what}: {response.status_code} {response.content[:300]!r}"
        body = response.json()
        assert named in [e["field"] for e in body.get("errors") or []] or body.get("field") == named, (what, body)


def test_every_valid_base_body_is_accepted(world, seat, api_client):
    """The table proves something only if the unmutated bodies pass validation."""
    for (_method, route), body in valid_bodies(seat).items():
        if "/recommendations/" in route:
            continue  # no recommendation 1: its 404 comes after validation, which is the point
        url = route.replace("{handle}", seat.handle)
        response = api_client.post(url, body, token=world["seat"])
        assert response.status_code in (200, 202), f"{route}: {response.status_code} {response.content[:300]!r}"


def param_cases():
    for path, ops in SCHEMA["paths"].items():
        for method, op in ops.items():
            for param in op.get("parameters", []):
                yield pytest.param(method, path, param, id=f"{method} {path} {param['name']}")


@pytest.mark.parametrize(("method", "path", "param"), list(param_cases()))
def test_each_bad_path_or_query_parameter_is_refused_422(method, path, param, world, seat, api_client):
    schema = _resolve(param["schema"])
    if "enum" in schema:
        bad = "not-one-of-" + "-".join(schema["enum"])
    elif schema.get("type") == "string":
        assert "maxLength" in schema, f"{path} {param['name']} has no documented cap"
        bad = "x" * (schema["maxLength"] + 1)
    else:
        assert "maximum" in schema, f"{path} {param['name']} has no documented bound"
        bad = schema["maximum"] + 1
    values = {"handle": seat.handle, "name": "use_skill", "shard_id": 1, "recommendation_id": 1}
    values[param["name"]] = bad
    url = path
    query = {}
    for name, value in values.items():
        url = url.replace("{" + name + "}", str(value))
    if param["in"] == "query":
        query[param["name"]] = bad
    token = world["operator"] if "recommendations" in path or "overview" in path else world["seat"]
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    client = api_client.c
    if method == "get":
        response = client.get(url, query, **headers)
    else:
        response = client.post(url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else ""),
                               json.dumps({"approve": True}), content_type="application/json", **headers)
    assert response.status_code == 422, f"{param['name']}: {response.status_code} {response.content[:300]!r}"
    assert param["name"] in [e["field"] for e in response.json()["errors"]]


def post_routes():
    for path, ops in SCHEMA["paths"].items():
        if "post" in ops and body_schema("post", path) is not None:
            yield path


@pytest.mark.parametrize("path", list(post_routes()))
def test_an_oversized_body_is_answered_413_as_json(path, world, seat, api_client, settings):
    url = path.replace("{handle}", seat.handle).replace("{name}", "use_skill").replace("{recommendation_id}", "1")
    token = world["operator"] if "recommendations" in path else world["seat"]
    body = json.dumps({"ask": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)})
    response = api_client.c.post(url, body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 413 and response["Content-Type"].startswith("application/json")
    assert str(settings.DATA_UPLOAD_MAX_MEMORY_SIZE) in response.json()["detail"]
    assert 413 in [int(code) for code in SCHEMA["paths"][path]["post"]["responses"]], "413 is not declared"


@pytest.mark.parametrize("path", list(post_routes()))
def test_a_malformed_json_body_is_answered_4xx_as_json(path, world, seat, api_client):
    url = path.replace("{handle}", seat.handle).replace("{name}", "use_skill").replace("{recommendation_id}", "1")
    token = world["operator"] if "recommendations" in path else world["seat"]
    response = api_client.c.post(url, b'{"ask": "unterminated', content_type="application/json",
                                 HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code in (400, 422) and response.json()["detail"]
    assert response.status_code in [int(code) for code in SCHEMA["paths"][path]["post"]["responses"]]


def test_an_unrouted_api_path_is_answered_404_as_json(api_client):
    response = api_client.get(f"{PREFIX}/no/such/route")
    assert response.status_code == 404 and response.json()["detail"].startswith("no route for GET")


def test_debug_is_off_unless_asked_for():
    import subprocess
    import sys

    code = "import crewlet.settings as s; print(s.DEBUG)"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": "."}
    assert subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True).stdout.strip() == "False"
    asked = subprocess.run([sys.executable, "-c", code], env={**env, "DJANGO_DEBUG": "1"}, capture_output=True, text=True)
    assert asked.stdout.strip() == "True"


def unknown_field_cases():
    """(route, where the stray field goes, the name the 422 gives it) for every body-taking route: ``seat``,
    or a misspelt ``seet`` where the body declares ``seat``."""
    routes = [(m, p) for p, ops in SCHEMA["paths"].items() for m in ops if body_schema(m, p) is not None]
    for method, path in routes:
        for route in ([path.replace("{name}", n) for n in TOOL_ARGS] if "{name}" in path else [path]):
            stray = "seet" if "seat" in _resolve(body_schema(method, path)).get("properties", {}) else "seat"
            yield pytest.param(method, route, (), stray, id=f"{method} {route} {stray}")
            if "/tools/" in route:
                yield pytest.param(method, route, ("arguments",), "arguments.seat", id=f"{method} {route} arguments.seat")


@pytest.mark.parametrize(("method", "route", "inside", "named"), list(unknown_field_cases()))
def test_an_unknown_field_is_refused_422_naming_it(method, route, inside, named, world, seat, other_seat, api_client):
    """``seat: "bo"`` beside a valid body is refused by name, never ignored while the token's seat acts."""
    template = route if "/tools/" not in route else "/api/v1/agents/{handle}/tools/" + route.rsplit("/", 1)[-1]
    base = valid_bodies(seat)[(method, template)]
    body = _set(base, (*inside, named.rsplit(".", 1)[-1]), other_seat.handle)
    url = route.replace("{handle}", seat.handle).replace("{recommendation_id}", "1")
    token = world["operator"] if "/recommendations/" in route else world["seat"]
    response = api_client.post(url, body, token=token)
    assert response.status_code == 422, f"{named}: {response.status_code} {response.content[:300]!r}"
    body = response.json()
    assert named in [e["field"] for e in body.get("errors") or []] or body.get("field") == named, body


def test_a_turn_at_every_upper_bound_is_stored_and_reflected_into_an_episode(
    seat, seat_token, api_client, monkeypatch, django_capture_on_commit_callbacks
):
    """The bounds are values the code can store and compute with: a turn at them files its episode."""
    from django.utils.dateparse import parse_datetime
    from django_q.conf import Conf

    from learning.limits import EARLIEST_TIME, MAX_DURATION_MS
    from learning.models import Episode, Turn

    monkeypatch.setattr(Conf, "SYNC", True)
    body = record(seat, started_at=EARLIEST_TIME, ended_at=LATEST_TIME, duration_ms=MAX_DURATION_MS)
    with django_capture_on_commit_callbacks(execute=True):
        response = api_client.post(f"{PREFIX}/turns", body, token=seat_token)
    assert response.status_code == 202, response.content
    assert Turn.objects.get().reflected_at is not None
    episode = Episode.objects.get(seat=seat)
    assert (episode.started_at, episode.ended_at) == (parse_datetime(EARLIEST_TIME), parse_datetime(LATEST_TIME))
    assert episode.duration_ms == MAX_DURATION_MS
    memory = api_client.get(f"{PREFIX}/agents/{seat.handle}/memory", token=seat_token)
    assert memory.status_code == 200 and memory.json()["episodes"]["total"] == 1


def test_a_duration_or_time_past_its_bound_is_refused_naming_it_never_accepted_and_lost(seat, seat_token, api_client):
    from learning.models import Turn

    for field_name, value in (("duration_ms", 10**20), ("ended_at", "9999-12-31T23:59:59-05:00")):
        response = api_client.post(f"{PREFIX}/turns", record(seat, **{field_name: value}), token=seat_token)
        assert response.status_code == 422, (field_name, response.content)
        assert field_name in [e["field"] for e in response.json()["errors"]]
    assert not Turn.objects.exists()
