"""A real agent loop on the official ``openai`` SDK's tool calling, plugged into Crewlet learning.

Per turn: prefetch (the turn-start blocks go into the system prompt) -> the model calls tools
(Crewlet's builtins through ``crewlet_client``, the runtime's own tools locally) until it answers
-> the turn record is posted -> the service reflects on it. Nothing here imports the service.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime

import openai

from crewlet_client import CrewletAPIError, CrewletClient

MAX_ROUNDS = 12
SYSTEM = "You are Ana, a platform engineer agent. Use your tools; answer the person when done.\n\n"


def _tool(name: str, description: str, **properties: str) -> dict:
    """A runtime-local tool in the same strict OpenAI shape Crewlet's ``format=openai`` answers."""
    return {"type": "function", "function": {
        "name": name, "description": description, "strict": True,
        "parameters": {"type": "object", "additionalProperties": False, "required": list(properties),
                       "properties": {k: {"type": "string", "description": v} for k, v in properties.items()}}}}


# The runtime's own tools (stand-ins for CI, git and chat); Crewlet never sees these, only their names.
LOCAL_TOOLS = {
    "read_ci_log": (_tool("read_ci_log", "Read the failing CI job's log.", job="The CI job name."),
                    lambda a: f"{a['job']}: test_payments_retry timed out after 30s (flaky: passes on rerun)"),
    "git_checkout": (_tool("git_checkout", "Check out a branch.", branch="The branch."),
                     lambda a: f"switched to {a['branch']}"),
    "apply_patch": (_tool("apply_patch", "Apply a code change.", summary="What the change does."),
                    lambda a: f"patched: {a['summary']}"),
    "rerun_ci": (_tool("rerun_ci", "Re-run a CI job.", job="The CI job name."),
                 lambda a: f"{a['job']}: passed"),
    "post_message": (_tool("post_message", "Post a chat message in the turn's thread.", text="The message."),
                     lambda a: "posted"),
}


@dataclass(frozen=True)
class Message:
    """The inbound message that wakes a turn (what a chat runtime hands its agent)."""

    run_id: str
    sender: str
    body: str
    conversation_id: str


@dataclass
class TurnLog:
    run_id: str
    offered_skills: list[str] = field(default_factory=list)
    tools_called: list[str] = field(default_factory=list)
    tool_iterations: int = 0  # the model's replies that called tools: one iteration each, however many calls
    results: list[tuple[str, str]] = field(default_factory=list)  # (tool, what the model read)
    answer: str = ""
    turn_status: str = ""


def offered_skills(prompt: str) -> list[str]:
    """The skill names the prefetch's skills block lists (``- name: description``)."""
    block = prompt.split("## Synthesized skills you've learned", 1)
    if len(block) < 2:
        return []
    lines = block[1].split("\n## ", 1)[0].splitlines()
    return [line[2:].split(":", 1)[0] for line in lines if line.startswith("- ")]


def run_tool(crewlet: CrewletClient, builtins: set[str], run_id: str, name: str, arguments: dict) -> str:
    """One tool call's result as the model reads it; a refusal is a result too, never a crash."""
    if name in builtins:
        try:
            return crewlet.call_tool(name, arguments, run_id=run_id).text
        except CrewletAPIError as exc:
            return f"error: {exc}"
    local = LOCAL_TOOLS.get(name)
    return local[1](arguments) if local else f"error: no tool named {name}"


def run_turn(*, llm: openai.OpenAI, model: str, crewlet: CrewletClient, message: Message) -> TurnLog:
    started = datetime.now(UTC)
    interactions = [{"sender": {"handle": message.sender, "platform": "chat"}, "body": message.body}]
    start = crewlet.prefetch(run_id=message.run_id, interactions=interactions, conversation_kind="chat",
                             conversation_id=message.conversation_id)
    crewlet_tools = crewlet.tools(format="openai")
    builtins = {t["function"]["name"] for t in crewlet_tools}
    tools = crewlet_tools + [definition for definition, _ in LOCAL_TOOLS.values()]
    log = TurnLog(run_id=message.run_id, offered_skills=offered_skills(start.prompt))
    messages: list[dict] = [
        {"role": "system", "content": SYSTEM + start.prompt + ("\n\n" + start.guidance if start.guidance else "")},
        {"role": "user", "content": f"{message.sender}: {message.body}"},
    ]
    for _ in range(MAX_ROUNDS):
        reply = llm.chat.completions.create(model=model, messages=messages, tools=tools).choices[0].message
        messages.append(reply.model_dump(exclude_none=True, exclude={"refusal", "annotations", "audio"}))
        if not reply.tool_calls:
            log.answer = reply.content or ""
            break
        log.tool_iterations += 1
        for call in reply.tool_calls:
            log.tools_called.append(call.function.name)
            result = run_tool(crewlet, builtins, message.run_id, call.function.name, json.loads(call.function.arguments))
            log.results.append((call.function.name, result))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    accepted = crewlet.post_turn(
        run_id=message.run_id, conversation_kind="chat", conversation_id=message.conversation_id,
        review_outcome="done", label=f"Message from {message.sender}", interactions=interactions,
        plan_summary=log.answer, tools_called=log.tools_called, tool_sequence=log.tools_called,
        tool_iterations=log.tool_iterations,
        replied=bool(log.answer),  # the final message went back to the person: engagement even with no tool
        started_at=started.isoformat(), ended_at=datetime.now(UTC).isoformat(),
    )
    log.turn_status = accepted.status
    return log
