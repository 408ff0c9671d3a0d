"""``manage.py mcp --seat ana`` (stdio) or ``manage.py mcp --http`` (streamable HTTP at /mcp)."""

from __future__ import annotations

import os

from django.core.management import BaseCommand, CommandError

from crewlet.errors import CrewletError

TOKEN_ENV = "CREWLET_TOKEN"


class Command(BaseCommand):
    help = ("Serve the agent builtins and the prefetch over MCP. stdio: --seat HANDLE with the seat's token in "
            f"${TOKEN_ENV}. --http: streamable HTTP at http://HOST:PORT/mcp, each client sending its seat token "
            "as a bearer token.")

    def add_arguments(self, parser):
        parser.add_argument("--seat", help="the seat to serve (stdio: required; HTTP: only this seat's token)")
        parser.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8765)

    def handle(self, *args, seat: str, http, host, port, **options):
        from learning.tools.mcp import transports

        if http:
            import uvicorn

            self.stderr.write(f"MCP (streamable HTTP) at http://{host}:{port}{transports.MCP_PATH}"
                              f"{f' for seat {seat}' if seat else ''}; send a seat token as a bearer token")
            uvicorn.run(transports.http_app(host=host, port=port, only=seat), host=host, port=port, log_level="warning")
            return
        if not seat:
            raise CommandError("--seat: stdio serves one seat; name it (or use --http)")
        token = os.environ.get(TOKEN_ENV, "")
        if not token:
            raise CommandError(f"{TOKEN_ENV}: set it to seat {seat!r}'s API token (manage.py create_seat_token {seat})")
        try:
            transports.serve_stdio(token=token, handle=seat)
        except CrewletError as exc:
            raise CommandError(exc.message) from None
