"""``GET /tools?format=...``: each provider's official SDK takes the definitions as they are.

The SDKs talk to the local fake servers, which refuse what the real APIs refuse (OpenAI's
strict-mode rules, Anthropic's object ``input_schema``); the model's tool call then goes back
through ``POST /agents/{handle}/tools/{name}``, so what a strict model sends is what we parse.
"""

from __future__ import annotations

import mcp.types
import openai
import pytest
from anthropic import Anthropic
from anthropic.types import ToolParam
from openai.types.chat import ChatCompletionFunctionToolParam
from pydantic import TypeAdapter

from learning.models import DiaryEntry
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.openai_server import FakeOpenAIServer


@pytest.fixture
def fetch(api_client, seat, seat_token):
    def _fetch(fmt):
        response = api_client.get("/api/v1/tools", token=seat_token, format=fmt)
        assert response.status_code == 200, response.content
        return response.json()

    return _fetch


def call_over_http(api_client, token, name, arguments):
    return api_client.post(f"/api/v1/agents/ana/tools/{name}", {"run_id": "run-sdk", "arguments": arguments},
                           token=token)


def test_the_default_shape_is_unchanged(fetch):
    listed = fetch("default")
    assert {"query_episodes", "reflect_and_persist", "use_skill"} <= {d["name"] for d in listed}
    assert all(set(d) == {"name", "description", "parameters"} for d in listed)


def test_openai_sdk_sends_the_strict_tools_and_the_model_call_parses(fetch, api_client, seat_token):
    listed = fetch("openai")
    adapter = TypeAdapter(ChatCompletionFunctionToolParam)
    assert all(adapter.validate_python(d) == d for d in listed)
    with FakeOpenAIServer() as server:
        server.answer_tool_calls(("reflect_and_persist", {"content": "Dana wants the CI link first.", "kind": "long",
                                                          "ttl_days": None}))
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        # ``parse`` refuses any tool that is not strict before sending; the fake refuses any
        # strict schema that breaks strict mode, as the real API does
        completion = client.chat.completions.parse(model="gpt-test", tools=listed,
                                                   messages=[{"role": "user", "content": "hi"}])
        assert server.last().body["tools"] == listed
    call = completion.choices[0].message.tool_calls[0]
    assert call.function.parsed_arguments["kind"] == "long"
    response = call_over_http(api_client, seat_token, call.function.name, call.function.parsed_arguments)
    assert response.status_code == 200, response.content
    assert DiaryEntry.objects.get().content == "Dana wants the CI link first."


def test_every_optional_argument_a_strict_model_sends_as_null_is_accepted(fetch, api_client, seat_token):
    for definition in fetch("openai"):
        function = definition["function"]
        params = function["parameters"]
        nullable = {name for name, prop in params["properties"].items()
                    if {"type": "null"} in prop.get("anyOf", [])}
        assert set(params["required"]) == set(params["properties"])
        if function["name"] == "query_episodes":
            args = {name: None for name in nullable} | {"limit": 3}
            response = call_over_http(api_client, seat_token, "query_episodes", args)
            assert response.status_code == 200 and response.json()["ok"], response.content


def test_the_fake_refuses_a_schema_that_breaks_strict_mode(fetch):
    """The check above can fail: the bare shape marked strict is refused, naming the keyword."""
    bare = fetch("default")[0]
    tool = {"type": "function", "function": {**bare, "strict": True}}
    with FakeOpenAIServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
        with pytest.raises(openai.BadRequestError) as err:
            client.chat.completions.create(model="gpt-test", tools=[tool], messages=[{"role": "user", "content": "x"}])
    assert "required" in str(err.value) and bare["name"] in str(err.value)


def test_anthropic_sdk_sends_the_tools_and_the_model_call_runs(fetch, api_client, seat_token, seat):
    listed = fetch("anthropic")
    adapter = TypeAdapter(ToolParam)
    assert all(adapter.validate_python(d) == d for d in listed)
    with FakeAnthropicServer() as server:
        server.answer_tool_use("query_episodes", {"query": "deploy a hotfix"})
        client = Anthropic(base_url=server.base_url, api_key="sk-ant-test", max_retries=0)
        message = client.messages.create(model="claude-test", max_tokens=200, tools=listed,
                                         messages=[{"role": "user", "content": "hi"}])
        assert server.last().body["tools"] == listed
    block = message.content[0]
    assert block.type == "tool_use"
    response = call_over_http(api_client, seat_token, block.name, block.input)
    assert response.status_code == 200 and response.json()["ok"], response.content


def test_the_anthropic_fake_refuses_the_openai_shape(fetch):
    with FakeAnthropicServer() as server:
        client = Anthropic(base_url=server.base_url, api_key="sk-ant-test", max_retries=0)
        with pytest.raises(Exception) as err:
            client.messages.create(model="claude-test", max_tokens=10, tools=fetch("openai"),
                                   messages=[{"role": "user", "content": "hi"}])
    assert "input_schema" in str(err.value)


def test_the_responses_shape_is_the_sdks_flat_function_tool_with_the_same_strict_schema(fetch):
    from openai.types.responses import FunctionToolParam

    listed, chat = fetch("openai-responses"), fetch("openai")
    adapter = TypeAdapter(FunctionToolParam)
    assert all(adapter.validate_python(d) == d for d in listed)
    assert [{"type": "function", **c["function"]} for c in chat] == listed
    assert all("function" not in d and d["strict"] is True for d in listed)


def test_mcp_shape_validates_as_the_sdk_tool_type(fetch):
    listed = fetch("mcp")
    tools = [mcp.types.Tool.model_validate(d) for d in listed]
    assert [t.name for t in tools] == [d["name"] for d in listed]
    assert all(t.input_schema["type"] == "object" for t in tools)


def test_an_unknown_format_is_a_422_naming_the_field(api_client, seat, seat_token):
    response = api_client.get("/api/v1/tools", token=seat_token, format="gemini")
    assert response.status_code == 422 and response.json()["errors"][0]["field"] == "format"
