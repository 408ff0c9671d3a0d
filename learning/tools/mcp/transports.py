"""Serve the MCP server over stdio (one seat's token, checked at start and on every call) or streamable
HTTP (each request's bearer token names its seat). Both authenticate with the seat's own API token (``crewlet.tokens``).
"""

from __future__ import annotations

import anyio
from asgiref.sync import sync_to_async
from django.db import close_old_connections
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.stdio import stdio_server
from starlette.applications import Starlette

from crewlet import tokens
from crewlet.errors import Forbidden
from learning.tools.mcp.server import build_server

MCP_PATH = "/mcp"


def serve_stdio(*, token: str, handle: str) -> None:
    """Check the token against the seat, then serve MCP on this process's stdin/stdout until EOF; every
    call checks the token again (one indexed read), so a revoked or expired token stops the next call."""
    tokens.seat_for(token, handle)  # Forbidden (one line) before any protocol byte
    from core.providers.embeddings.warm import warm

    warm()  # the model loads before the first call, whose embed would otherwise run past its budget
    close_old_connections()
    server = build_server(lambda ctx: tokens.seat_for(token, handle), default_run_id=None)

    async def main():
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


class SeatTokenVerifier:
    """The SDK's ``TokenVerifier``: a seat token (of ``only``, when given) is an access token."""

    def __init__(self, only: str | None = None):
        self.only = only

    def _check(self, raw: str) -> AccessToken | None:
        close_old_connections()
        try:
            seat = tokens.seat_for(raw, self.only)
        except Forbidden:
            return None
        return AccessToken(token=raw, client_id=seat.handle, scopes=[], subject=str(seat.pk))

    async def verify_token(self, token: str) -> AccessToken | None:
        return await sync_to_async(self._check)(token)


def _seat_of_request(ctx):
    from crewlet.models import Seat

    access = ctx.request.user.access_token  # set by the SDK's bearer middleware for this request
    return Seat.objects.select_related("role", "unit", "company").get(pk=int(access.subject))


def http_app(*, host: str = "127.0.0.1", port: int = 8765, only: str | None = None) -> Starlette:
    """The streamable-HTTP app at ``/mcp``; 401 without a live seat token (of ``only``)."""
    server = build_server(_seat_of_request)
    base = f"http://{host}:{port}"
    return server.streamable_http_app(
        streamable_http_path=MCP_PATH, host=host, token_verifier=SeatTokenVerifier(only),
        auth=AuthSettings(issuer_url=base, resource_server_url=None),
    )
