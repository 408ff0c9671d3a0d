"""The agents API: auth on every route, bad input answered 4xx naming the field, the memory read API."""

import pytest

from core import events
from learning.events import ReflectionCompleted
from learning.models import CounterpartyProfile, DiaryEntry
from tests.factories import operator_token, token_for
from tests.learning.memory.rows import episode, note, skill

ROUTES = [
    ("post", "/api/v1/agents/ana/prefetch", {"run_id": "r1", "ask": "hi"}),
    ("get", "/api/v1/tools", None),
    ("post", "/api/v1/agents/ana/tools/mark_onboarded", {"run_id": "r1"}),
    ("get", "/api/v1/agents/ana/memory", None),
    ("get", "/api/v1/memory/overview", None),
]


def _send(api_client, method, path, body, token):
    return api_client.post(path, body, token=token) if method == "post" else api_client.get(path, token=token)


@pytest.mark.parametrize("method,path,body", ROUTES)
def test_every_route_refuses_a_missing_or_unknown_token(api_client, seat, method, path, body):
    assert _send(api_client, method, path, body, None).status_code == 401
    assert _send(api_client, method, path, body, "crw_not-a-token").status_code == 401


@pytest.mark.parametrize("method,path,body", [r for r in ROUTES if "/agents/ana/" in r[1]])
def test_another_seats_token_is_forbidden(api_client, seat, other_seat, method, path, body):
    response = _send(api_client, method, path, body, token_for(other_seat))
    assert response.status_code == 403 and "bo" in response.json()["detail"]


def test_a_revoked_token_and_an_inactive_seat_are_refused(api_client, seat):
    from crewlet.models import ApiToken

    raw = token_for(seat)
    ApiToken.objects.update(revoked=True)
    assert api_client.get("/api/v1/agents/ana/memory", token=raw).status_code == 401
    raw = token_for(seat)
    seat.active = False
    seat.save()
    assert api_client.get("/api/v1/agents/ana/memory", token=raw).status_code == 401


def test_the_overview_needs_an_operator_token(api_client, seat, seat_token, company):
    assert api_client.get("/api/v1/memory/overview", token=seat_token).status_code == 401
    assert api_client.get("/api/v1/memory/overview", token=operator_token(company)).status_code == 200


def test_an_operator_may_read_a_seats_memory_but_not_run_its_turn(api_client, seat, company):
    op = operator_token(company)
    assert api_client.get("/api/v1/agents/ana/memory", token=op).status_code == 200
    assert api_client.post("/api/v1/agents/ana/prefetch", {"run_id": "r", "ask": "x"}, token=op).status_code == 403
    assert api_client.post("/api/v1/agents/ana/tools/mark_onboarded", {}, token=op).status_code == 403
    assert api_client.get("/api/v1/agents/nobody/memory", token=op).status_code == 404


@pytest.mark.parametrize("path,body,field", [
    ("/api/v1/agents/ana/prefetch", {"ask": "x"}, "run_id"),
    ("/api/v1/agents/ana/prefetch", {"run_id": "r", "requires_recon": "perhaps"}, "requires_recon"),
    ("/api/v1/agents/ana/prefetch", {"run_id": "r", "thread": {"status": "lost"}}, "thread.status"),
    ("/api/v1/agents/ana/prefetch", {"run_id": "r\u0000x"}, "run_id"),
    ("/api/v1/agents/ana/prefetch", {"run_id": "r", "ask": "\ud800"}, "ask"),
    ("/api/v1/agents/ana/tools/query_episodes", {"arguments": {"limit": 500}}, "arguments.limit"),
    ("/api/v1/agents/ana/tools/reflect_and_persist", {"run_id": "r", "arguments": {"kind": "long"}}, "arguments.content"),
    ("/api/v1/agents/ana/tools/reflect_and_persist", {"arguments": {"content": "x", "kind": "long"}}, "run_id"),
    ("/api/v1/agents/ana/tools/reflect_and_persist",
     {"run_id": "r", "arguments": {"content": "x" * 2001, "kind": "long"}}, "arguments.content"),
    ("/api/v1/agents/ana/tools/use_skill", {"arguments": {"name": "nope"}}, "arguments.name"),
    ("/api/v1/agents/ana/tools/no_such_tool", {}, "name"),
    ("/api/v1/agents/ana/tools/use_skill", {"arguments": "not an object"}, "arguments"),
])
def test_bad_input_is_a_4xx_naming_the_field(api_client, seat, seat_token, path, body, field):
    response = api_client.post(path, body, token=seat_token)
    assert 400 <= response.status_code < 500
    payload = response.json()
    named = {payload.get("field")} | {e["field"] for e in payload.get("errors", [])}
    assert field in named, payload


def test_malformed_json_is_a_4xx(api_client, seat, seat_token):
    response = api_client.c.post("/api/v1/agents/ana/prefetch", "{not json", content_type="application/json",
                                 HTTP_AUTHORIZATION=f"Bearer {seat_token}")
    assert 400 <= response.status_code < 500


def test_prefetch_over_http_returns_blocks_guidance_and_the_summary(api_client, seat, seat_token, role):
    role.tools = ["reflect_and_persist"]
    role.save()
    note(seat, "Carol prefers links to the runbook")
    body = {"run_id": "turn-1", "ask": "+1", "requires_recon": True,
            "interactions": [{"sender": {"handle": "carol", "platform": "mattermost"}, "body": "+1"}]}
    first = api_client.post("/api/v1/agents/ana/prefetch", body, token=seat_token).json()
    assert first["frozen"] is False and first["guidance_keys"] == ["reflect-and-persist"]
    assert first["summary"]["summary"].startswith("prefetch: ") and "## Personal memory" in first["prompt"]
    again = api_client.post("/api/v1/agents/ana/prefetch", body, token=seat_token).json()
    assert again["frozen"] is True and again["blocks"] == first["blocks"]


def test_tools_over_http(api_client, seat, seat_token):
    listed = api_client.get("/api/v1/tools", token=seat_token).json()
    assert all(set(t) == {"name", "description", "parameters"} for t in listed)
    skill(seat, "deploy", body="1. ship")
    response = api_client.post("/api/v1/agents/ana/tools/use_skill", {"run_id": "t", "arguments": {"name": "deploy"}},
                               token=seat_token)
    assert response.status_code == 200 and response.json()["text"] == "1. ship"
    assert api_client.post("/api/v1/agents/ana/tools/use_skill", {"arguments": {"name": "nope"}},
                           token=seat_token).status_code == 404


def test_memory_read_pages_each_section_with_its_counted_total(api_client, seat, seat_token, other_seat):
    for i in range(5):
        note(seat, f"fact {i}", days_ago=i)
    note(other_seat, "not ana's")
    episode(seat, ask="a", did="b", run_id="t-1")
    skill(seat, "deploy")
    CounterpartyProfile.objects.create(observer=seat, subject_handle="carol", communication_style="terse")
    events.publish(ReflectionCompleted(run_id="t-1", gate="no_engagement"), seat=seat, turn_id="t-1")
    response = api_client.get("/api/v1/agents/ana/memory", token=seat_token, limit=2, offset=1)
    body = response.json()
    assert body["diary"]["total"] == 5 and [n["content"] for n in body["diary"]["items"]] == ["fact 1", "fact 2"]
    assert body["episodes"]["total"] == 1 and body["skills"]["total"] == 1 and body["profiles"]["total"] == 1
    assert body["latest_reflection"]["turn_id"] == "t-1" and body["onboarded_at"] is None
    assert body["held_by"].startswith("database:")
    assert api_client.get("/api/v1/agents/ana/memory", token=seat_token, limit=0).status_code == 422


def test_the_overview_lists_every_seats_totals_and_newest_note(api_client, seat, other_seat, company):
    note(seat, "older", days_ago=3)
    note(seat, "newest of ana")
    DiaryEntry.objects.create(seat=other_seat, kind=DiaryEntry.SHORT, content="expired",
                              created_at=seat.created_at, ttl_until=seat.created_at)
    body = api_client.get("/api/v1/memory/overview", token=operator_token(company)).json()
    agents = {a["handle"]: a for a in body["agents"]}
    assert agents["ana"]["totals"]["diary"] == 2 and agents["ana"]["newest_note"]["content"] == "newest of ana"
    assert agents["bo"]["totals"]["diary"] == 0 and agents["bo"]["newest_note"] is None
    assert body["coverage"]["missing"] == []


def test_an_empty_ask_is_read_from_the_interactions_bodies(api_client, seat, seat_token):
    note(seat, "The billing export runs nightly at 02:00")
    body = {"run_id": "t-ask", "interactions": [
        {"sender": {"handle": "carol", "display_name": "Carol"}, "body": "When does the billing export run?"},
        {"sender": {"handle": "dan", "display_name": "Dan"}, "body": "and who owns it?"}]}
    answer = api_client.post("/api/v1/agents/ana/prefetch", body, token=seat_token).json()
    assert answer["summary"]["thin_trigger"] is False and answer["summary"]["turn_embedding"] == "embedded"
    body = {"run_id": "t-none", "interactions": [{"sender": {"handle": "carol"}, "body": "   "}]}
    assert api_client.post("/api/v1/agents/ana/prefetch", body, token=seat_token).json()["summary"]["thin_trigger"]


def test_one_rule_derives_the_ask_senders_named_only_when_several_spoke_label_only_when_sent():
    from learning.intake.record import derive_ask
    from tests.learning.memory.rows import said

    one = (said("a", handle="c", name="Carol"), said("b", handle="c"))
    two = (said("a", handle="c", name="Carol"), said("b", handle="d"))
    assert derive_ask(ask="", interactions=one) == "a\nb"
    assert derive_ask(ask="", interactions=two) == "Carol: a\nd: b"
    # a chat message's subject is only the surface's name: it never leads the ask unless it was sent
    assert derive_ask(ask="", interactions=one, label="Message from Carol: Slack message") == "a\nb"
    assert derive_ask(ask="", interactions=one, label="PLAT-1: Cut release", subject_is_label=False) == (
        "PLAT-1: Cut release\na\nb")
    assert derive_ask(ask="stated", interactions=two) == "stated"


@pytest.mark.parametrize("seats", [1, 10])
def test_the_overview_makes_a_bounded_number_of_queries_however_many_seats(
        api_client, company, role, unit, seats, django_assert_max_num_queries):
    from tests.factories import SeatFactory

    for i in range(seats):
        s = SeatFactory(company=company, role=role, unit=unit, handle=f"s{i:02d}")
        note(s, f"older of s{i:02d}", days_ago=2)
        note(s, f"newest of s{i:02d}")
    token = operator_token(company)
    with django_assert_max_num_queries(10):  # the token (2), its company, the seats, four counts, the newest notes (2)
        body = api_client.get("/api/v1/memory/overview", token=token).json()
    assert [a["newest_note"]["content"] for a in body["agents"]] == [f"newest of s{i:02d}" for i in range(seats)]
    assert {a["totals"]["diary"] for a in body["agents"]} == {2}
