"""The agent builtins, registered by name: ``definitions(seat)`` lists them, ``run(...)`` calls one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from crewlet.errors import BadInput, NotFound
from learning import tool_names
from learning.tools import (
    mark_onboarded,
    query_episodes,
    refine_skill,
    reflect_and_persist,
    refresh_memory,
    search_knowledge,
    use_skill,
)
from learning.tools.base import Tool, ToolCall, ToolResult

if TYPE_CHECKING:
    from crewlet.models import Seat

REGISTRY: dict[str, Tool] = {
    module.TOOL.name: module.TOOL
    for module in (
        query_episodes,
        reflect_and_persist,
        refresh_memory,
        refine_skill,
        use_skill,
        mark_onboarded,
        search_knowledge,
    )
}


def available(seat: Seat | None) -> list[Tool]:
    withdrawn = tool_names.withdrawn(seat) if seat is not None else {}
    return [tool for tool in REGISTRY.values() if tool.name not in withdrawn]


def definitions(seat: Seat | None, fmt: str = "default") -> list[dict]:
    """The tools available to the seat, shaped for one provider (``formats.FORMATS``)."""
    from learning.tools import formats

    return formats.shaped(available(seat), fmt)


def get(name: str, seat: Seat) -> Tool:
    tool = REGISTRY.get(name)
    if tool is None:
        raise NotFound(f"no builtin named {name!r} (known: {', '.join(REGISTRY)})", field="name")
    reason = tool_names.withdrawn(seat).get(name)
    if reason:
        raise NotFound(reason, field="name")
    return tool


def run(*, seat: Seat, name: str, run_id: str = "", arguments: dict | None = None) -> ToolResult:
    tool = get(name, seat)
    if tool.needs_run_id and not run_id.strip():
        raise BadInput(f"run_id: {name} keeps per-turn state and needs the turn's run id", field="run_id")
    args = tool.parse(arguments or {})
    return tool.handler(ToolCall(seat=seat, run_id=run_id, args=args))


__all__ = ["REGISTRY", "Tool", "ToolResult", "available", "definitions", "get", "run"]
