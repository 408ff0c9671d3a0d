"""The MCP server through the SDK's own client: over stdio (``manage.py mcp --seat ana`` as a real
subprocess) and over streamable HTTP (uvicorn on a loopback port), both on the test database."""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from pathlib import Path

import anyio
import httpx2
import pytest
import uvicorn
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from learning import tools
from learning.models import DiaryEntry
from learning.tools.mcp import transports
from tests.factories import token_for
from tests.learning.passes.test_qcluster import test_database_url

ROOT = Path(__file__).resolve().parents[4]
pytestmark = pytest.mark.django_db(transaction=True)

CONFIG = """
[company]
name = "Acme"
[providers.llm.offline]
kind = "offline"
[providers.embeddings]
kind = "hashing"
model = "hashing-256"
dimensions = 256
"""


def exercise(client: Client, run_id: str) -> dict:
    """What an agent does over MCP in one turn; answers what it saw."""

    async def go():
        async with client:
            listed = await client.list_tools()
            started = await client.call_tool("prefetch", {"run_id": run_id, "ask": "Ship the 2.4.1 hotfix"})
            note = await client.call_tool("reflect_and_persist", {
                "run_id": run_id, "content": "Dana wants the CI run linked before any hotfix ships.", "kind": "long"})
            found = await client.call_tool("query_episodes", {"run_id": run_id, "limit": 3})
            bad = await client.call_tool("reflect_and_persist", {"run_id": run_id, "kind": "long"})
            return {"tools": listed.tools, "prefetch": started, "note": note, "episodes": found, "bad": bad}

    return anyio.run(go)


def assert_one_turn(seen: dict, seat) -> None:
    names = [t.name for t in seen["tools"]]
    assert names[0] == "prefetch" and {"query_episodes", "reflect_and_persist", "use_skill"} <= set(names)
    assert not seen["prefetch"].is_error and "run_id" in seen["prefetch"].structured_content
    assert not seen["note"].is_error, seen["note"].content
    entry = DiaryEntry.objects.get(seat=seat)
    assert entry.content == "Dana wants the CI run linked before any hotfix ships."
    assert entry.id == seen["note"].structured_content["data"]["entry_id"]
    assert not seen["episodes"].is_error and seen["episodes"].structured_content["data"]["mode"] == "recency"
    assert seen["bad"].is_error and "arguments.content" in seen["bad"].content[0].text


def stdio_server(seat, tmp_path) -> StdioServerParameters:
    """``manage.py mcp --seat ana`` as a real subprocess, on the test database, acting as ``seat``."""
    config = tmp_path / "crewlet.toml"
    config.write_text(CONFIG)
    env = {"DATABASE_URL": test_database_url(), "CREWLET_CONFIG": str(config), "CREWLET_TOKEN": token_for(seat),
           "CREWLET_LOG_LEVEL": "WARNING", "PYTHONPATH": str(ROOT)}
    return StdioServerParameters(command=sys.executable, args=["manage.py", "mcp", "--seat", "ana"], env=env,
                                 cwd=str(ROOT))


def test_over_stdio_a_client_lists_the_tools_calls_them_and_the_note_is_stored(seat, tmp_path):
    params = stdio_server(seat, tmp_path)
    seen = exercise(Client(params, read_timeout_seconds=60), "run-stdio")
    assert_one_turn(seen, seat)
    assert DiaryEntry.objects.get(seat=seat).turn_id == "run-stdio"


def test_over_stdio_a_turn_starts_writes_land_when_it_is_the_sessions_last_call(seat, tmp_path):
    """The prefetch is the session's last call: its writes (the summary event among them) still land."""
    from core.models import Event

    params = stdio_server(seat, tmp_path)

    async def go():
        async with Client(params, read_timeout_seconds=60) as client:
            await client.list_tools()
            return await client.call_tool("prefetch", {"run_id": "run-last", "ask": "Ship the 2.4.1 hotfix"})

    started = anyio.run(go)  # returns once the server process has ended
    assert not started.is_error
    assert Event.objects.filter(turn_id="run-last", name="prefetch_summary").count() == 1


def test_stdio_refuses_a_token_of_another_seat_in_one_line(seat, other_seat, tmp_path):
    import subprocess

    env = {**os.environ, "DATABASE_URL": test_database_url(), "CREWLET_TOKEN": token_for(other_seat),
           "CREWLET_CONFIG": str(tmp_path / "none.toml")}
    done = subprocess.run([sys.executable, "manage.py", "mcp", "--seat", "ana"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().splitlines() == ["CommandError: this token belongs to seat 'bo' and cannot act as 'ana'"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_mcp():
    """``manage.py mcp --http``'s app under uvicorn on a loopback port; its base URL."""
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(transports.http_app(port=port), host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "uvicorn did not start"
    yield f"http://127.0.0.1:{port}{transports.MCP_PATH}"
    server.should_exit = True
    thread.join(timeout=10)
    # the app's database calls ran on asgiref's one thread for thread-sensitive calls, whose connection
    # outlives the server (persistent connections); closed there, or PostgreSQL cannot drop the test database
    from asgiref.sync import SyncToAsync
    from django.db import connections

    SyncToAsync.single_thread_executor.submit(connections.close_all).result(timeout=10)


def test_over_streamable_http_the_bearer_token_names_the_seat(seat, http_mcp):
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token_for(seat)}"}, timeout=30)
    seen = exercise(Client(streamable_http_client(http_mcp, http_client=http)), "run-http")
    assert_one_turn(seen, seat)


def test_over_http_a_missing_or_operator_token_is_401(seat, http_mcp):
    from tests.factories import operator_token

    hello = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream"}
    assert httpx2.post(http_mcp, json=hello, headers=headers).status_code == 401
    operator = operator_token(seat.company)
    refused = httpx2.post(http_mcp, json=hello, headers={**headers, "Authorization": f"Bearer {operator}"})
    assert refused.status_code == 401


def test_the_mcp_tools_are_the_registry_in_the_mcp_shape(seat, api_client, seat_token):
    """One registry: what MCP lists is what ``GET /tools?format=mcp`` answers, plus the prefetch."""
    from learning.tools.mcp.server import build_server

    async def listed():
        async with Client(build_server(lambda ctx: seat)) as client:
            return (await client.list_tools()).tools

    over_mcp = [t.model_dump(by_alias=True, exclude_none=True) for t in anyio.run(listed)]
    over_api = api_client.get("/api/v1/tools", token=seat_token, format="mcp").json()
    assert over_mcp[1:] == over_api == tools.definitions(seat, "mcp")


def test_over_mcp_a_turn_start_answers_once_its_writes_are_made(seat):
    """The runtime has its prefix when the turn start's writes (the frozen prefix, spend, stamps, events)
    are committed: the agent's next call finds them."""
    from asgiref.sync import SyncToAsync
    from django.db import connections

    from core.models import Event
    from learning.models import PrefetchSnapshot
    from learning.tools.mcp.server import build_server

    def stored() -> tuple[bool, int]:  # read on a thread of its own, as another process would
        try:
            return (PrefetchSnapshot.objects.filter(seat=seat, run_id="run-mcp").exists(),
                    Event.objects.filter(turn_id="run-mcp", name="prefetch_summary").count())
        finally:
            connections.close_all()

    async def go():
        async with Client(build_server(lambda ctx: seat)) as client:
            await client.list_tools()  # as an agent does first (the client checks each result against its schema)
            started = await client.call_tool("prefetch", {"run_id": "run-mcp", "ask": "Ship the 2.4.1 hotfix"})
            return started, await anyio.to_thread.run_sync(stored)

    try:
        started, at_answer = anyio.run(go)
    finally:
        SyncToAsync.single_thread_executor.submit(connections.close_all).result(timeout=10)
    assert not started.is_error and started.structured_content["frozen"] is False
    assert at_answer == (True, 1)


def test_prefetch_takes_run_id_optionally_as_every_tool_does(seat):
    """Without a run_id the prefetch keys the turn by the connection's own id, which the other tools default to."""
    from learning.models import PrefetchSnapshot
    from learning.tools.mcp import server

    listed = {d["name"]: d for d in server.list_definitions(seat)}
    assert "run_id" not in listed["prefetch"]["inputSchema"].get("required", [])
    assert "run_id" in listed["prefetch"]["inputSchema"]["properties"]

    started = server.call(seat, "prefetch", {"ask": "Ship the 2.4.1 hotfix"}, default_run_id="mcp-conn-1")
    again = server.call(seat, "prefetch", {"ask": "something else"}, default_run_id="mcp-conn-1")

    assert not started.is_error and started.structured_content["run_id"] == "mcp-conn-1"
    assert again.structured_content["frozen"] is True  # the same turn: the same prefix back
    assert PrefetchSnapshot.objects.filter(seat=seat, run_id="mcp-conn-1").count() == 1
