"""Trust over MCP: a token revoked or expired mid-session stops a stdio session's next call, a field the
tool does not declare is refused by name, and what the agent sends is scrubbed of secrets as over HTTP."""

from __future__ import annotations

from datetime import timedelta

import anyio
import pytest
from mcp import Client

from crewlet import tokens
from crewlet.models import ApiToken
from learning.models import DiaryEntry, PrefetchSnapshot
from tests.learning.tools.mcp.test_mcp import stdio_server

pytestmark = pytest.mark.django_db(transaction=True)

NOTE = {"content": "Dana wants the CI run linked before any hotfix ships.", "kind": "long"}


def _in_thread(fn):
    """``fn`` on a worker thread (the ORM is synchronous), its connection closed after."""
    from django.db import connections

    def run():
        try:
            return fn()
        finally:
            connections.close_all()

    return anyio.to_thread.run_sync(run)


@pytest.mark.parametrize("how", ["revoke", "expire"])
def test_over_stdio_a_token_revoked_or_expired_mid_session_refuses_the_next_call(how, seat, tmp_path):
    from django.utils import timezone

    params = stdio_server(seat, tmp_path)
    prefix = ApiToken.objects.get(seat=seat).prefix

    def withdraw():
        if how == "revoke":
            tokens.revoke(prefix=prefix)
        else:
            tokens.expire(prefix=prefix, at=timezone.now() - timedelta(minutes=1))

    async def go():
        async with Client(params, read_timeout_seconds=60) as client:
            first = await client.call_tool("reflect_and_persist", {"run_id": "run-live", **NOTE})
            await _in_thread(withdraw)
            second = await client.call_tool("reflect_and_persist", {"run_id": "run-live", **NOTE, "content": "Another."})
            third = await client.call_tool("query_episodes", {"run_id": "run-live"})
            return first, second, third

    first, second, third = anyio.run(go)
    assert not first.is_error, first.content
    for refused in (second, third):
        assert refused.is_error and refused.content[0].text == "the token is unknown, revoked or expired"
    assert list(DiaryEntry.objects.filter(seat=seat).values_list("content", flat=True)) == [NOTE["content"]]


def call_in_process(seat, calls: list[tuple[str, dict]]) -> list:
    """Each ``(tool, arguments)`` through the SDK's client against the server in this process."""
    from asgiref.sync import SyncToAsync
    from django.db import connections

    from learning.tools.mcp.server import build_server

    async def go():
        async with Client(build_server(lambda ctx: seat)) as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    try:
        return anyio.run(go)
    finally:
        SyncToAsync.single_thread_executor.submit(connections.close_all).result(timeout=10)


def test_over_mcp_a_field_a_tool_does_not_declare_is_refused_naming_it(seat, other_seat):
    """``seat: "bo"`` is refused, never ignored while the connection's seat acts."""
    prefetch, note, bound = call_in_process(seat, [
        ("prefetch", {"run_id": "run-stray", "ask": "Ship the hotfix", "seat": other_seat.handle}),
        ("reflect_and_persist", {"run_id": "run-stray", **NOTE, "seat": other_seat.handle}),
        ("reflect_and_persist", {"run_id": "run-stray", **NOTE, "kind": "short", "ttl_days": 10**20}),
    ])
    assert prefetch.is_error and "arguments.seat" in prefetch.content[0].text
    assert note.is_error and "arguments.seat" in note.content[0].text
    assert bound.is_error and "arguments.ttl_days" in bound.content[0].text
    assert not PrefetchSnapshot.objects.exists() and not DiaryEntry.objects.exists()


def test_over_mcp_a_secret_in_a_prefetch_or_a_note_is_stored_scrubbed(seat):
    from tests.test_secrets_scrubbed import PLANTED, SECRETS, every_row_as_text

    started, note = call_in_process(seat, [
        ("prefetch", {"run_id": "run-mcp-creds", "ask": PLANTED}),
        ("reflect_and_persist", {"run_id": "run-mcp-creds", "content": PLANTED, "kind": "long"}),
    ])
    assert not started.is_error and not note.is_error, (started.content, note.content)
    assert "[REDACTED:github-token]" in DiaryEntry.objects.get(seat=seat).content
    rows = every_row_as_text()
    for kind, (_, value) in SECRETS.items():
        assert not [table for table, text in rows if value.lower() in text], f"{kind} stored verbatim"
        assert value not in str(started.structured_content), f"{kind} answered verbatim"
