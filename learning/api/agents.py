"""The agent-facing API: turn-start prefetch, the builtins, and the memory read API.

Routes parse input, call one service and shape the output; errors are the project's typed errors,
mapped to HTTP once in ``crewlet.api``. A seat token acts only as its own seat.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from ninja import Field, Path, Query, Router, Schema

from crewlet.api_input import InputSchema
from crewlet.auth import operator_auth, require_seat, seat_auth
from crewlet.errors import Forbidden, error_responses
from crewlet.models import ApiToken
from learning import memory_read, tools
from learning.limits import MAX_ASK_CHARS, MAX_INTERACTIONS, MAX_THREAD_MESSAGES
from learning.prefetch import Interaction, PrefetchRequest, Thread, ThreadMessage, prefetch
from learning.prefetch.request import THREAD_READ, ask_from_interactions
from learning.tools.base import Text

router = Router(tags=["agents"])

HANDLE = Path(..., pattern=r"^[-a-zA-Z0-9_]+$", max_length=100)
TOOL_NAME = Path(..., pattern=r"^[a-z_]+$", max_length=60)


class SenderIn(InputSchema):
    """A resolved sender (the same shape ``POST /turns`` takes): a handle or an external id, on a platform."""

    handle: Text = Field("", max_length=200)
    external_id: Text = Field("", max_length=200)
    platform: Text = Field("", max_length=60)
    display_name: Text = Field("", max_length=200)
    kind: Literal["human", "agent", "bot"] = "human"


class InteractionIn(InputSchema):
    """One inbound message of the trigger: its sender and its salient body (the message, no scaffolding)."""

    sender: SenderIn = Field(default_factory=SenderIn)
    body: Text = Field("", max_length=MAX_ASK_CHARS)


class ThreadMessageIn(InputSchema):
    sender_name: Text = Field("", max_length=200)
    sender_handle: Text = Field("", max_length=200)
    is_self: bool = False
    text: Text = Field("", max_length=MAX_ASK_CHARS)
    ts: Text = Field("", max_length=100)


class ThreadIn(InputSchema):
    status: Literal["read", "unreadable", "truncated"] = THREAD_READ
    messages: list[ThreadMessageIn] = Field(default_factory=list, max_length=MAX_THREAD_MESSAGES)


class PrefetchIn(InputSchema):
    run_id: Text = Field(..., min_length=1, max_length=200, pattern=r"\S", description="The turn's run id.")
    ask: Text = Field("", max_length=MAX_ASK_CHARS, description="What the turn was asked (salient text, no scaffolding); when empty, "
                      "the interactions' bodies are the ask.")
    requires_recon: bool = Field(False, description="The notification builder's flag: the trigger is a pointer.")
    interactions: list[InteractionIn] = Field(default_factory=list, max_length=MAX_INTERACTIONS)
    conversation_id: Text = Field("", max_length=300)
    conversation_kind: Text = Field("", max_length=40)
    thread: ThreadIn | None = Field(None, description="The chat thread read at turn start; only for a thread reply.")
    tools: list[Annotated[Text, Field(max_length=60)]] | None = Field(None, max_length=500, description="Tools registered for the role; "
                                     "omitted means the role's configured tools.")


class BlockOut(Schema):
    name: str
    text: str
    hit: bool
    bytes: int


class PrefetchOut(Schema):
    run_id: str
    frozen: bool
    prompt: str
    blocks: list[BlockOut]
    guidance: str
    guidance_keys: list[str]
    summary: dict[str, Any]


class ToolDefinitionOut(Schema):
    name: str
    description: str
    parameters: dict[str, Any]


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


def acting_seat(request, handle: str):
    """The seat a turn runs as: only its own seat token may start its turn or call its tools."""
    if request.auth.kind != ApiToken.SEAT:
        raise Forbidden("an operator token cannot run a seat's turn; use the seat's own token")
    return require_seat(request, handle)


def to_request(body: PrefetchIn) -> PrefetchRequest:
    thread = None
    if body.thread is not None:
        thread = Thread(status=body.thread.status,
                        messages=tuple(ThreadMessage(**m.model_dump()) for m in body.thread.messages))
    interactions = tuple(
        Interaction(sender_handle=i.sender.handle, sender_external_id=i.sender.external_id,
                    platform=i.sender.platform, sender_name=i.sender.display_name, body=i.body)
        for i in body.interactions
    )
    return PrefetchRequest(
        run_id=body.run_id.strip(),
        ask=body.ask if body.ask.strip() else ask_from_interactions(interactions),
        requires_recon=body.requires_recon,
        interactions=interactions,
        conversation_id=body.conversation_id,
        conversation_kind=body.conversation_kind,
        thread=thread,
        tools=tuple(body.tools) if body.tools is not None else None,
    )


@router.post("/agents/{handle}/prefetch", auth=seat_auth,
             response={200: PrefetchOut, **error_responses(400, 401, 403, 404, 413, 422)})
def run_prefetch(request, body: PrefetchIn, handle: str = HANDLE):
    """The turn-start blocks for one run id, frozen: the same run id gets the same prefix back."""
    seat = acting_seat(request, handle)
    return prefetch(seat=seat, request=to_request(body))


@router.get("/tools", auth=seat_auth, response={200: list[ToolDefinitionOut], **error_responses(401)})
def list_tools(request):
    """Every builtin available to the caller, as function-calling tool definitions."""
    token = request.auth
    return tools.definitions(token.seat if token.kind == ApiToken.SEAT else None)


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
    return memory_read.agent_memory(seat=seat, limit=limit, offset=offset)


@router.get("/memory/overview", auth=operator_auth, response={200: OverviewOut, **error_responses(401)})
def memory_overview(request):
    """Every seat's totals and newest note (operator token)."""
    return memory_read.overview(company=request.auth.company)
