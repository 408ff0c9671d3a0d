"""The builtins' definitions in each provider's own shape: OpenAI (strict), Anthropic, MCP.

One registry, one argument model per tool; these functions only reshape ``Tool.definition()`` so
that an integrator hands the list to its SDK as it is. The OpenAI form is strict-mode: the SDK's
own ``to_strict_json_schema`` makes every property required and every object closed, and the
keywords strict mode does not accept (``default``, ``minLength``, ``maxLength``) move into the
description, where the model still reads them; the server enforces them when the call arrives.
"""

from __future__ import annotations

from typing import Literal

from openai.lib._pydantic import to_strict_json_schema

from learning.tools.base import Tool

Format = Literal["default", "openai", "openai-responses", "anthropic", "mcp"]
FORMATS: tuple[str, ...] = ("default", "openai", "openai-responses", "anthropic", "mcp")

# Keywords OpenAI's strict mode refuses (platform.openai.com/docs/guides/structured-outputs,
# "Supported schemas"); each is said in words instead.
_UNSUPPORTED_STRICT = {
    "default": "default {}",
    "minLength": "at least {} characters",
    "maxLength": "at most {} characters",
}


def _said(key: str, value) -> str:
    if key == "minLength" and value == 1:
        return "not empty"
    return _UNSUPPORTED_STRICT[key].format(value)


def _strict(node):
    """``node`` without the keywords strict mode refuses, and those keywords in words."""
    if isinstance(node, list):
        return [_described(n) for n in node], []
    if not isinstance(node, dict):
        return node, []
    out: dict = {}
    said: list[str] = []
    for key, value in node.items():
        if key == "title":
            continue
        if key in _UNSUPPORTED_STRICT:
            said.append(_said(key, value))
        elif key == "anyOf":  # a nullable field's limits sit on its non-null variant
            variants = [_strict(v) for v in value]
            out[key] = [v for v, _ in variants]
            said += [w for _, words in variants for w in words]
        elif key in ("properties", "$defs"):
            out[key] = {name: _described(sub) for name, sub in value.items()}
        elif key == "items":
            out[key] = _described(value)
        else:
            out[key] = value
    return out, said


def _described(node):
    out, said = _strict(node)
    if said and isinstance(out, dict):
        out["description"] = f"{out.get('description', '').rstrip('.')} ({'; '.join(said)}).".lstrip()
    return out


def openai_definition(tool: Tool) -> dict:
    """``{"type": "function", "function": {..., "strict": true}}`` as Chat Completions takes it."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": _strict(to_strict_json_schema(tool.arguments))[0],
            "strict": True,
        },
    }


def openai_responses_definition(tool: Tool) -> dict:
    """``{"type": "function", "name", "description", "parameters", "strict": true}``: the flat shape the
    Responses API (``client.responses.create(tools=...)``) takes, with the same strict schema."""
    return {"type": "function", **openai_definition(tool)["function"]}


def anthropic_definition(tool: Tool) -> dict:
    """``{"name", "description", "input_schema"}`` as the Messages API takes it."""
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema()}


RUN_ID_PROPERTY = {
    "type": "string",
    "description": "The turn's run id (the one given to prefetch); defaults to this connection's own id.",
}


def mcp_definition(tool: Tool) -> dict:
    """``{"name", "description", "inputSchema"}`` as an MCP ``tools/list`` answers it.

    MCP has no envelope beside the arguments, so the turn's ``run_id`` rides among them.
    """
    schema = tool.input_schema()
    schema["properties"] = {**schema.get("properties", {}), "run_id": RUN_ID_PROPERTY}
    return {"name": tool.name, "description": tool.description, "inputSchema": schema}


SHAPERS = {
    "default": Tool.definition,
    "openai": openai_definition,
    "openai-responses": openai_responses_definition,
    "anthropic": anthropic_definition,
    "mcp": mcp_definition,
}


def shaped(tools: list[Tool], fmt: str = "default") -> list[dict]:
    return [SHAPERS[fmt](tool) for tool in tools]
