"""A small typed client for the Crewlet learning API: turn-start prefetch, tools, turns, memory.

    from crewlet_client import CrewletClient
    crewlet = CrewletClient("http://127.0.0.1:8000", token=os.environ["CREWLET_TOKEN"], seat="ana")
    start = crewlet.prefetch(run_id="run-1", ask="Fix the flaky CI job")
    result = crewlet.call_tool("query_episodes", {"query": "flaky CI"}, run_id="run-1")
    crewlet.post_turn(run_id="run-1", conversation_kind="chat", review_outcome="done", plan_summary="...")

Every non-2xx answer raises a ``CrewletAPIError`` subclass; a 422 is ``InvalidField`` naming the
field(s). The client depends only on ``httpx2`` and ``pydantic``, never on the server's code.
"""

from crewlet_client.client import CrewletClient
from crewlet_client.errors import (
    Conflict,
    CrewletAPIError,
    Forbidden,
    InvalidField,
    NotFound,
    Unauthorized,
)
from crewlet_client.models import Block, Memory, MemoryPage, Prefetch, ToolResult, TurnAccepted

__all__ = [
    "Block", "Conflict", "CrewletAPIError", "CrewletClient", "Forbidden", "InvalidField", "Memory", "MemoryPage",
    "NotFound", "Prefetch", "ToolResult", "TurnAccepted", "Unauthorized",
]
