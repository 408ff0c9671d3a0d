"""A database that cannot take the request now: it refuses writes (a read-only transaction, a standby) or
the connection failed, was refused or was cut. The request was fine and is worth retrying, so it is
answered 503 with ``Retry-After``, never a generic 500: the API's handler (``crewlet.api``) answers as
JSON, and ``UnavailableMiddleware`` answers the lead's pages and the admin.
"""

from __future__ import annotations

import logging

from django.db import DatabaseError, OperationalError
from django.http import HttpResponse

log = logging.getLogger("crewlet.unavailable")

RETRY_AFTER_SECONDS = 30  # what a 503 asks a client to wait: a failover or a restart's usual span
READ_ONLY_SQLSTATE = "25006"  # PostgreSQL's read_only_sql_transaction
MESSAGE = "the database is not taking writes right now; retry later"


def database_unavailable(exc: BaseException) -> bool:
    if not isinstance(exc, DatabaseError):
        return False
    return isinstance(exc, OperationalError) or getattr(exc.__cause__, "sqlstate", None) == READ_ONLY_SQLSTATE


class UnavailableMiddleware:
    """A view's database outage as a plain 503 page with ``Retry-After``; any other error passes on."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exc):
        if not database_unavailable(exc):
            return None
        log.warning("database unavailable on %s %s: %s", request.method, request.path, exc)
        response = HttpResponse(f"503: {MESSAGE}.\n", status=503, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
