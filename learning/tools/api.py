"""The agent-facing API: turn-start prefetch, the builtins, and the memory read API.

Routes parse input, call one service and shape the output; errors are the project's typed errors,
mapped to HTTP once in ``crewlet.api``. A seat token acts only as its own seat.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ninja import Field, Path, Query, Router, Schema

from core.scrub import scrub_secrets
from crewlet.api_input import InputSchema
from crewlet.auth import acting_seat, operator_auth, require_seat, seat_auth
from crewlet.errors import error_responses
from crewlet.models import ApiToken
from learning import tools
from learning.intake.record import ConversationKind, Interaction, Text, ToolName
from learning.limits import MAX_INTERACTIONS, MAX_TEXT_CHARS
from learning.memory import overview
from learning.prefetch import PrefetchRequest, Thread, prefetch
from learning.tools.formats import Format

router = Router(tags=["agents"])

HANDLE = Path(..., pattern=r"^[-a-zA-Z0-9_]+$", max_length=100)
TOOL_NAME = Path(..., pattern=r"^[a-z_]+$", max_length=60)
TOOL_FORMAT = Query("default", description="The provider shape of each definition: default, openai (strict), "
                    "anthropic or mcp.")


class PrefetchIn(InputSchema):
    run_id: Text = Field(..., min_length=1, max_length=200, pattern=r"\S", description="The turn's run id.")
    ask: Text = Field("", max_length=MAX_TEXT_CHARS, description="What the turn was asked (salient text, no scaffolding); when empty, "
                      "the interactions' bodies are the ask.")
    label: Text = Field("", max_length=2000, description="The waking event's label (what kind of event woke the turn).")
    subject_is_label: bool = Field(True, description="The label is only the surface's name, not part of what was "
                                   "sent; false leads the derived ask with the label.")
    requires_recon: bool = Field(False, description="The notification builder's flag: the trigger is a pointer.")
    interactions: list[Interaction] = Field(default_factory=list, max_length=MAX_INTERACTIONS)
    conversation_id: Text = Field("", max_length=300)
    conversation_kind: ConversationKind | None = None
    thread: Thread | None = Field(None, description="The chat thread read at turn start; only for a thread reply.")
    tools: list[ToolName] | None = Field(None, max_length=500, description="Tools registered for the role; "
                                     "omitted means the role's configured tools.")


class BlockOut(Schema):
    name: str
    text: str
    hit: bool
    bytes: int


class PrefetchOut(Schema):
    run_id: str
    frozen: bool
    ask: str = Field("", description="The ask this turn start derived (and embedded); reflection stores the same.")
    skills_offered: list[int] = Field(default_factory=list, description="Skill ids the prompt offered, in prompt order; POST /turns "
                                      "takes them from here when its record omits them.")
    prompt: str
    blocks: list[BlockOut]
    guidance: str
    guidance_keys: list[str]
    summary: dict[str, Any]



class ToolCallIn(InputSchema):
    run_id: Text = Field("", max_length=200)
    arguments: dict[str, Any] = Field(default_factory=dict, max_length=20,
                                      description="The builtin's arguments (its definition from GET /tools).")


class ToolResultOut(Schema):
    tool: str
    ok: bool
    text: str
    data: dict[str, Any]


class PageOut(Schema):
    total: int
    limit: int
    offset: int
    items: list[dict[str, Any]]


class MemoryOut(Schema):
    handle: str
    held_by: str
    diary: PageOut
    episodes: PageOut
    skills: PageOut
    profiles: PageOut
    latest_reflection: dict[str, Any] | None
    onboarded_at: datetime | None


class OverviewOut(Schema):
    company: str
    agents: list[dict[str, Any]]
    coverage: dict[str, Any]


def to_request(body: PrefetchIn) -> PrefetchRequest:
    """The turn start's request, its text scrubbed of secrets before any model or snapshot sees it."""
    return PrefetchRequest.from_trigger(
        run_id=body.run_id,
        ask=scrub_secrets(body.ask),
        label=scrub_secrets(body.label),
        subject_is_label=body.subject_is_label,
        requires_recon=body.requires_recon,
        interactions=[i.scrubbed() for i in body.interactions],
        conversation_id=body.conversation_id,
        conversation_kind=body.conversation_kind or "",
        thread=_scrubbed_thread(body.thread),
        tools=tuple(body.tools) if body.tools is not None else None,
    )


def _scrubbed_thread(thread: Thread | None) -> Thread | None:
    if thread is None:
        return None
    messages = tuple(m.model_copy(update={"text": scrub_secrets(m.text)}) for m in thread.messages)
    return thread.model_copy(update={"messages": messages})


@router.post("/agents/{handle}/prefetch", auth=seat_auth,
             response={200: PrefetchOut, **error_responses(400, 401, 403, 404, 413, 422)})
def run_prefetch(request, body: PrefetchIn, handle: str = HANDLE):
    """The turn-start blocks for one run id, frozen: the same run id gets the same prefix back."""
    seat = acting_seat(request, handle)
    return prefetch(seat=seat, request=to_request(body))


@router.get("/tools", auth=seat_auth, response={200: list[dict[str, Any]], **error_responses(401, 422)})
def list_tools(request, format: Format = TOOL_FORMAT):
    """Every builtin available to the caller, as tool definitions in the shape the format names.

    ``default``: ``{name, description, parameters}``. ``openai``: Chat Completions function tools
    in strict mode. ``openai-responses``: the Responses API's flat function tools (``name`` beside
    ``type``), strict alike. ``anthropic``: Messages API tools (``input_schema``). ``mcp``: MCP ``tools/list``
    entries (``inputSchema``). Each is accepted by that provider's SDK as it is.
    """
    token = request.auth
    return tools.definitions(token.seat if token.kind == ApiToken.SEAT else None, format)


@router.post("/agents/{handle}/tools/{name}", auth=seat_auth,
             response={200: ToolResultOut, **error_responses(400, 401, 403, 404, 409, 413, 422)})
def call_tool(request, body: ToolCallIn, handle: str = HANDLE, name: str = TOOL_NAME):
    """Run one builtin as the seat; ``run_id`` names the turn it is called from."""
    seat = acting_seat(request, handle)
    result = tools.run(seat=seat, name=name, run_id=body.run_id.strip(), arguments=body.arguments)
    return {"tool": name, "ok": result.ok, "text": result.text, "data": result.data}


@router.get("/agents/{handle}/memory", auth=seat_auth,
            response={200: MemoryOut, **error_responses(401, 403, 404, 422)})
def agent_memory(request, handle: str = HANDLE, limit: int = Query(20, ge=1, le=100),
                 offset: int = Query(0, ge=0, le=1_000_000)):
    """The seat's diary, episodes, skills and profiles, each a page with its counted total."""
    seat = require_seat(request, handle)
    return overview.agent_memory(seat=seat, limit=limit, offset=offset)


@router.get("/memory/overview", auth=operator_auth, response={200: OverviewOut, **error_responses(401)})
def memory_overview(request):
    """Every seat's totals and newest note (operator token)."""
    return overview.overview(company=request.auth.company)
