"""``mark_onboarded``: stop the first-turn onboarding block for your unit chain as it is now."""

from __future__ import annotations

from learning.memory import onboarding
from learning.tools.base import Arguments, Tool, ToolCall, ToolResult


class MarkOnboardedArgs(Arguments):
    pass


def handle(call: ToolCall[MarkOnboardedArgs]) -> ToolResult:
    marker = onboarding.mark_onboarded(seat=call.seat)
    return ToolResult(ok=True, data={"onboarded_at": marker.onboarded_at.isoformat()}, text=(
        "Marked onboarded for your team as it is now structured; the onboarding block stops until your "
        "unit chain changes."))


TOOL = Tool(
    name="mark_onboarded",
    description="Call once you have read your team's onboarding pages, so the First-turn onboarding block stops.",
    arguments=MarkOnboardedArgs,
    handler=handle,
)
