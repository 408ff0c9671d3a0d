"""Build the MCP ``Server`` for the seat a connection authenticated as.

``build_server(seat_for)`` takes a callable that answers the seat of the current request, checking
its token on every call: the stdio process's one token, each HTTP request's bearer token. A token
revoked or expired mid-session refuses the session's next call (``seat_for`` raises ``Forbidden``).
Django's ORM is synchronous, so each call runs in a worker thread with fresh connections, as a
request would.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

import mcp_types as types
from asgiref.sync import sync_to_async
from django.db import close_old_connections
from mcp.server import Server
from pydantic import ValidationError

from crewlet.errors import CrewletError
from learning import tools
from learning.prefetch import prefetch
from learning.tools.api import PrefetchIn, PrefetchOut, to_request
from learning.tools.base import bad_arguments

if TYPE_CHECKING:
    from crewlet.models import Seat

PREFETCH_TOOL = "prefetch"
PREFETCH_DESCRIPTION = (
    "Call first, at the start of every turn, with the turn's run id and what you were asked: it answers your "
    "memory, similar past work, your skills and team knowledge as prompt blocks (the same run id always gets "
    "the same blocks back). Pass the same run_id to the other tools of this turn."
)
INSTRUCTIONS = (
    "Crewlet learning: call `prefetch` at the start of a turn, use the memory and skill tools during it, and "
    "pass the turn's run_id to every call."
)


def _prefetch_definition() -> dict:
    schema = PrefetchIn.model_json_schema()
    schema.pop("title", None)
    # run_id is optional here, as for every tool over MCP: without one the connection's own id is the turn's
    schema["required"] = [f for f in schema.get("required", []) if f != "run_id"]
    return {"name": PREFETCH_TOOL, "description": PREFETCH_DESCRIPTION, "inputSchema": schema}


def list_definitions(seat: Seat) -> list[dict]:
    """What ``tools/list`` answers: the prefetch, then the builtins available to the seat."""
    return [_prefetch_definition(), *tools.definitions(seat, "mcp")]


def call(seat: Seat, name: str, arguments: dict, *, default_run_id: str) -> types.CallToolResult:
    """Run one call as the seat; a refusal is an error result naming the field, never an exception."""
    try:
        if name == PREFETCH_TOOL:
            if not arguments.get("run_id"):
                arguments = {**arguments, "run_id": default_run_id}
            try:
                body = PrefetchIn.model_validate(arguments)
            except ValidationError as exc:  # name each bad field
                raise bad_arguments(exc) from None
            out = PrefetchOut.model_validate(prefetch(seat=seat, request=to_request(body))).model_dump(mode="json")
            return _result(True, out["prompt"], out)
        run_id = str(arguments.pop("run_id", None) or default_run_id)
        result = tools.run(seat=seat, name=name, run_id=run_id, arguments=arguments)
        return _result(result.ok, result.text, {"ok": result.ok, "data": result.data, "run_id": run_id})
    except CrewletError as exc:
        return _result(False, exc.message, {"detail": exc.message, **exc.extra})


def _result(ok: bool, text: str, structured: dict) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text or json.dumps(structured))],
        structured_content=structured,
        is_error=not ok,
    )


def _in_thread(fn, *args, **kwargs):
    close_old_connections()
    try:
        return fn(*args, **kwargs)
    finally:
        close_old_connections()


def build_server(seat_for: Callable[[object], object], *, default_run_id: str | None = None) -> Server:
    """The MCP server; ``seat_for(ctx)`` is the seat the request acts as (sync, runs off the loop)."""
    fallback = default_run_id or f"mcp-{uuid.uuid4().hex[:12]}"

    async def on_list_tools(ctx, params) -> types.ListToolsResult:
        seat = await sync_to_async(_in_thread)(seat_for, ctx)
        listed = await sync_to_async(_in_thread)(list_definitions, seat)
        return types.ListToolsResult(tools=[types.Tool.model_validate(d) for d in listed])

    async def on_call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            seat = await sync_to_async(_in_thread)(seat_for, ctx)
        except CrewletError as exc:  # the token was revoked or expired since the last call
            return _result(False, exc.message, {"detail": exc.message, **exc.extra})
        arguments = dict(params.arguments or {})
        return await sync_to_async(_in_thread)(call, seat, params.name, arguments, default_run_id=fallback)

    return Server("crewlet-learning", version="1", instructions=INSTRUCTIONS,
                  on_list_tools=on_list_tools, on_call_tool=on_call_tool)
