"""Every route in the OpenAPI schema has a description and real examples that fit its own schema.

The examples are bodies captured from a real run (``bin/capture_api_examples.py``); validating
them against the schema here means a schema change that outdates them fails until they are
captured again.
"""

from __future__ import annotations

import jsonschema
import pytest

from crewlet.api import api
from crewlet.openapi_examples import captured

SCHEMA = api.get_openapi_schema()
OPERATIONS = [(f"{method.upper()} {path}", op) for path, ops in SCHEMA["paths"].items() for method, op in ops.items()]


def _validate(example, schema):
    document = {**schema, "components": SCHEMA["components"]}
    jsonschema.validate(example, document)


@pytest.mark.parametrize("key, operation", OPERATIONS, ids=[k for k, _ in OPERATIONS])
def test_each_route_has_a_description_and_real_examples_that_fit_its_schema(key, operation):
    assert operation.get("description", "").strip(), f"{key} has no description"
    assert key in captured(), f"{key}: no captured exchange; run bin/capture_api_examples.py"
    body = operation.get("requestBody", {}).get("content", {}).get("application/json")
    if body is not None:
        assert "example" in body, f"{key}: no request example"
        _validate(body["example"], body["schema"])
    answered = [r["content"]["application/json"] for code, r in operation["responses"].items()
                if str(code).startswith("2") and "example" in r.get("content", {}).get("application/json", {})]
    assert answered, f"{key}: no response example"
    for content in answered:
        _validate(content["example"], content["schema"])


def test_an_example_that_breaks_its_schema_is_caught():
    """The check above can fail: a turn record missing its review outcome does not validate."""
    body = SCHEMA["paths"]["/api/v1/turns"]["post"]["requestBody"]["content"]["application/json"]
    broken = {k: v for k, v in body["example"].items() if k != "review_outcome"}
    with pytest.raises(jsonschema.ValidationError):
        _validate(broken, body["schema"])
