"""OpenAI's strict-mode schema rules, as the real API enforces them on a ``strict: true`` tool.

From the Structured Outputs guide ("Supported schemas"): the root is an object (not ``anyOf``),
every object sets ``additionalProperties: false`` and lists every property in ``required``, and
only these keywords are accepted. The real API answers anything else with a 400 naming the
function and the path; so does the fake.
"""

from __future__ import annotations

ALLOWED = {
    "type", "properties", "required", "additionalProperties", "description", "title", "enum", "const",
    "anyOf", "items", "$defs", "$ref",
    "pattern", "format",  # strings
    "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",  # numbers
    "minItems", "maxItems",  # arrays
}


def problems(schema: dict, path: tuple = ()) -> list[str]:
    """Every way ``schema`` breaks strict mode, as ``context=(path), message``."""
    out = []
    if not path and (schema.get("type") != "object" or "anyOf" in schema):
        out.append("context=(), the root schema must be an object and not anyOf")
    for key in schema:
        if key not in ALLOWED:
            out.append(f"context={path}, '{key}' is not permitted")
    if schema.get("type") == "object":
        if schema.get("additionalProperties") is not False:
            out.append(f"context={path}, 'additionalProperties' is required to be supplied and to be false")
        props = schema.get("properties", {})
        missing = [name for name in props if name not in schema.get("required", [])]
        if missing:
            out.append(f"context={path}, 'required' is required to include every key in properties; missing {missing}")
        for name, sub in props.items():
            out += problems(sub, (*path, "properties", name))
    for i, variant in enumerate(schema.get("anyOf", [])):
        out += problems(variant, (*path, "anyOf", i))
    if isinstance(schema.get("items"), dict):
        out += problems(schema["items"], (*path, "items"))
    for name, sub in schema.get("$defs", {}).items():
        out += problems(sub, (*path, "$defs", name))
    return out


def tool_problems(tools: list) -> list[str]:
    out = []
    for tool in tools:
        function = tool.get("function", {}) if tool.get("type") == "function" else None
        if function is None:
            out.append(f"tool type {tool.get('type')!r} is not a function tool")
        elif function.get("strict"):
            out += [f"Invalid schema for function '{function.get('name')}': In {p}." for p in
                    problems(function.get("parameters", {}))]
    return out
