"""The one NinjaAPI; each app mounts its router here and errors map to HTTP answers once.

Every failure answers with the ``ErrorOut`` JSON body, never a traceback or an HTML page: an
oversized body is 413, a malformed one 400, a field the schema refuses 422 naming the field, a
database that refuses writes or connections 503 with ``Retry-After``, and an unmapped error 500 with
an id to find its logged traceback by.
"""

import logging
import uuid

from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.db import DatabaseError
from django.http import JsonResponse
from ninja import NinjaAPI
from ninja.errors import ValidationError

from crewlet import openapi_examples, unavailable
from crewlet.errors import CrewletError

log = logging.getLogger("crewlet.api")

DESCRIPTION = (
    "The agent-facing API of Crewlet learning. A runtime calls `POST /agents/{handle}/prefetch` at turn start, "
    "the builtins at `POST /agents/{handle}/tools/{name}` during the turn (definitions for every provider at "
    "`GET /tools?format=...`), and `POST /turns` after it. Authenticate with the seat's bearer token. "
    "docs/integration.md walks through the sequence."
)


class CrewletAPI(NinjaAPI):
    def get_openapi_schema(self, *, path_prefix=None, path_params=None):
        schema = super().get_openapi_schema(path_prefix=path_prefix, path_params=path_params)
        return openapi_examples.attach(schema)


api = CrewletAPI(title="Crewlet learning", version="1", urls_namespace="api", description=DESCRIPTION)


@api.exception_handler(CrewletError)
def _crewlet_error(request, exc: CrewletError):
    return api.create_response(request, {"detail": exc.message, **exc.extra}, status=exc.status)


@api.exception_handler(ValidationError)
def _validation_error(request, exc: ValidationError):
    fields = []
    for err in exc.errors:
        fields.append({"field": ".".join(_field_path(err.get("loc", ()))) or "body", "message": err.get("msg", "invalid")})
    names = ", ".join(f["field"] for f in fields)
    return api.create_response(request, {"detail": f"invalid fields: {names}", "errors": fields}, status=422)


def _field_path(loc) -> list[str]:
    """The field as the caller spelled it: ninja's ("body", <param>, ...) or ("query", name) prefix dropped."""
    loc = [str(p) for p in loc]
    if loc[:1] == ["body"]:
        return loc[2:]
    if loc[:1] and loc[0] in ("query", "path", "header", "cookie", "form"):
        return loc[1:]
    return loc


@api.exception_handler(RequestDataTooBig)
def _too_big(request, exc: RequestDataTooBig):
    from django.conf import settings

    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return api.create_response(
        request, {"detail": f"request body is larger than {limit} bytes", "max": limit}, status=413
    )


@api.exception_handler(SuspiciousOperation)
def _suspicious(request, exc: SuspiciousOperation):
    return api.create_response(request, {"detail": f"malformed request: {exc.__class__.__name__}"}, status=400)


@api.exception_handler(DatabaseError)
def _database_error(request, exc: DatabaseError):
    if not unavailable.database_unavailable(exc):
        return _unmapped(request, exc)
    log.warning("database unavailable on %s %s: %s", request.method, request.path, exc)
    response = api.create_response(
        request, {"detail": unavailable.MESSAGE, "retry_after": unavailable.RETRY_AFTER_SECONDS}, status=503)
    response["Retry-After"] = str(unavailable.RETRY_AFTER_SECONDS)
    return response


@api.exception_handler(Exception)
def _unmapped(request, exc: Exception):
    error_id = uuid.uuid4().hex[:12]
    log.error("unmapped error %s on %s %s", error_id, request.method, request.path, exc_info=exc)
    return api.create_response(request, {"detail": "internal error", "error_id": error_id}, status=500)


def json_not_found(request, exception=None):
    """Django's 404 for a path no route matches: JSON under the API, the stock page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": f"no route for {request.method} {request.path}"}, status=404)
    from django.views.defaults import page_not_found

    return page_not_found(request, exception)


def json_server_error(request):
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "internal error"}, status=500)
    from django.views.defaults import server_error

    return server_error(request)


def _mount():
    """Every app's router, mounted once (imported here: the apps' routes import crewlet, not the reverse)."""
    from crewlet.org_api import router as org
    from learning.intake.api import router as turns  # POST /turns (intake)
    from learning.tools.api import router as agents  # prefetch, tools, memory read
    from learning.transcripts.api import (
        router as transcripts,  # publish_memory, reject_memory, review_recommendation
    )

    for router in (org, turns, agents, transcripts):
        api.add_router("/", router)


_mount()
