"""The answers, typed. Unknown fields are kept (``extra="allow"``), so a newer server never breaks
an older client; ``tests/test_client.py`` checks each model against the server's OpenAPI schema."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class _Answer(BaseModel):
    model_config = ConfigDict(extra="allow")


class Block(_Answer):
    name: str
    text: str
    hit: bool
    bytes: int


class Prefetch(_Answer):
    """The turn-start blocks for one run id; ``prompt`` goes into the system prompt as it is."""

    run_id: str
    frozen: bool
    ask: str = ""  # the ask this turn start derived; reflection stores the same
    skills_offered: list[int] = []  # in prompt order; POST /turns takes them from the run when omitted
    prompt: str
    blocks: list[Block]
    guidance: str
    guidance_keys: list[str]
    summary: dict[str, Any]


class ToolResult(_Answer):
    """One builtin's answer; ``text`` is what the model reads, ``data`` the same in structure."""

    tool: str
    ok: bool
    text: str
    data: dict[str, Any]


class TurnAccepted(_Answer):
    turn_id: int
    run_id: str
    status: Literal["accepted", "duplicate"]


class MemoryPage(_Answer):
    total: int
    limit: int
    offset: int
    items: list[dict[str, Any]]


class Memory(_Answer):
    handle: str
    held_by: str
    diary: MemoryPage
    episodes: MemoryPage
    skills: MemoryPage
    profiles: MemoryPage
    latest_reflection: dict[str, Any] | None
    onboarded_at: datetime | None
