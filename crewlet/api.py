"""The one NinjaAPI; each app mounts its router here and errors map to HTTP answers once."""

from ninja import NinjaAPI
from ninja.errors import ValidationError

from crewlet.errors import CrewletError

api = NinjaAPI(title="Crewlet learning", version="1", urls_namespace="api")


@api.exception_handler(CrewletError)
def _crewlet_error(request, exc: CrewletError):
    return api.create_response(request, {"detail": exc.message, **exc.extra}, status=exc.status)


@api.exception_handler(ValidationError)
def _validation_error(request, exc: ValidationError):
    fields = []
    for err in exc.errors:
        loc = [str(p) for p in err.get("loc", []) if p not in ("body", "payload", "query", "path")]
        fields.append({"field": ".".join(loc) or "body", "message": err.get("msg", "invalid")})
    names = ", ".join(f["field"] for f in fields)
    return api.create_response(request, {"detail": f"invalid fields: {names}", "errors": fields}, status=422)


def _mount():
    """Every app's router, mounted once (imported here: the apps' routes import crewlet, not the reverse)."""
    from crewlet.org_api import router as org
    from learning.api.agents import router as agents  # prefetch, tools, memory read
    from learning.api.turns import router as turns  # POST /turns (intake)
    from learning.transcripts.api import (
        router as transcripts,  # publish_memory, reject_memory, review_recommendation
    )

    for router in (org, turns, agents, transcripts):
        api.add_router("/", router)


_mount()
