"""Real request and response bodies as each route's OpenAPI examples.

``docs/api-examples.json`` holds one captured exchange per route (``bin/capture_api_examples.py``
records them from a run of the example agent on the demo's database); the schema carries them as
``example`` under the request body and the answering status, so ``/api/v1/docs`` shows bodies a
real runtime sent and got instead of ``"string"``.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "api-examples.json"


@cache
def captured() -> dict[str, dict]:
    return json.loads(EXAMPLES.read_text()) if EXAMPLES.exists() else {}


def attach(schema: dict) -> dict:
    """``schema`` with each captured exchange set as its route's request and response example."""
    for key, exchange in captured().items():
        method, path = key.split(" ", 1)
        operation = schema.get("paths", {}).get(path, {}).get(method.lower())
        if operation is None:
            continue
        body = operation.get("requestBody", {}).get("content", {}).get("application/json")
        if body is not None and exchange.get("request") is not None:
            body["example"] = exchange["request"]
        for param in operation.get("parameters", []):
            value = (exchange.get("query") or {}).get(param["name"])
            if value is not None:
                param["example"] = value
        answer = operation.get("responses", {}).get(exchange["status"]) or operation.get("responses", {}).get(
            str(exchange["status"]))
        content = (answer or {}).get("content", {}).get("application/json")
        if content is not None:
            content["example"] = exchange["response"]
    return schema
