"""The OpenAI-compatible provider against a local fake speaking ``/v1/chat/completions``."""

from __future__ import annotations

import socket

import pytest

from core.providers.errors import ConfigurationError, RateLimitedError, RefusedError, TransientError
from core.providers.llm.openai_compat import OpenAICompatProvider, token_limit_field
from core.providers.llm.sdk import LOCAL_PLACEHOLDER_KEY
from tests.core.providers.helpers import OPENAI_KEY, OPENAI_KEY_ENV, openai_spec

MESSAGES = [{"role": "system", "content": "You judge notes."}, {"role": "user", "content": "Keep this one?"}]


def provider(server, **overrides) -> OpenAICompatProvider:
    return OpenAICompatProvider(alias="gpt", spec=openai_spec(server, **overrides))


def test_request_carries_model_messages_and_max_tokens(openai_server):
    provider(openai_server).complete(MESSAGES, max_tokens=77)

    request = openai_server.last()
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "gpt-test"
    assert request.body["messages"] == MESSAGES
    assert request.body["max_tokens"] == 77
    assert "response_format" not in request.body


def test_json_call_asks_for_a_json_object_response_format(openai_server):
    provider(openai_server).complete(MESSAGES, max_tokens=10, json=True)

    assert openai_server.last().body["response_format"] == {"type": "json_object"}


def test_key_is_read_from_the_named_env_var_and_sent_as_bearer(openai_server):
    provider(openai_server).complete(MESSAGES, max_tokens=10)

    assert openai_server.last().headers["authorization"] == f"Bearer {OPENAI_KEY}"


def test_a_rotated_key_is_read_at_call_time(openai_server, monkeypatch):
    gpt = provider(openai_server)
    gpt.complete(MESSAGES, max_tokens=10)
    monkeypatch.setenv(OPENAI_KEY_ENV, "sk-rotated")
    openai_server.api_key = "sk-rotated"

    gpt.complete(MESSAGES, max_tokens=10)

    assert openai_server.last().headers["authorization"] == "Bearer sk-rotated"


def test_text_usage_and_model_are_read_back_from_the_response(openai_server):
    openai_server.answer('{"tier": "NOOP"}', input_tokens=123, output_tokens=45)

    completion = provider(openai_server).complete(MESSAGES, max_tokens=10)

    assert completion.text == '{"tier": "NOOP"}'
    assert (completion.input_tokens, completion.output_tokens) == (123, 45)
    assert completion.model == "gpt-test"


def test_an_answer_without_usage_is_counted_by_estimate_not_as_zero(openai_server):
    openai_server.answer("three short words", no_usage=True)

    completion = provider(openai_server).complete(MESSAGES, max_tokens=10)

    assert completion.input_tokens == 6
    assert completion.output_tokens == 3


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (401, ConfigurationError),
        (403, ConfigurationError),
        (404, ConfigurationError),
        (400, RefusedError),
        (422, RefusedError),
        (429, RateLimitedError),
        (500, TransientError),
        (503, TransientError),
    ],
)
def test_each_error_status_maps_to_its_typed_error(openai_server, status, error):
    openai_server.fail(status)

    with pytest.raises(error) as caught:
        provider(openai_server).complete(MESSAGES, max_tokens=10)

    assert type(caught.value) is error
    assert str(status) in str(caught.value)


def test_a_rejected_key_is_a_configuration_error_naming_the_env_var(openai_server):
    openai_server.api_key = "sk-someone-else"

    with pytest.raises(ConfigurationError, match=OPENAI_KEY_ENV):
        provider(openai_server).complete(MESSAGES, max_tokens=10)


def test_an_unknown_model_is_a_configuration_error(openai_server):
    openai_server.models = {"gpt-other"}

    with pytest.raises(ConfigurationError, match="404"):
        provider(openai_server).complete(MESSAGES, max_tokens=10)


def test_a_refusal_in_the_answer_is_refused(openai_server):
    openai_server.answer("", refusal="I can't help with that.")

    with pytest.raises(RefusedError, match="can't help"):
        provider(openai_server).complete(MESSAGES, max_tokens=10)


def test_a_stalled_server_times_out_as_transient(openai_server):
    openai_server.stall(5)

    with pytest.raises(TransientError, match="timed out"):
        provider(openai_server, timeout_seconds=0.3).complete(MESSAGES, max_tokens=10)


def test_an_unreachable_endpoint_is_transient(openai_server):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]

    with pytest.raises(TransientError, match="could not reach"):
        provider(openai_server, base_url=f"http://127.0.0.1:{closed_port}/v1").complete(MESSAGES, max_tokens=10)


def test_sdk_retries_follow_max_retries_and_default_to_none(openai_server):
    openai_server.fail(500)
    with pytest.raises(TransientError):
        provider(openai_server).complete(MESSAGES, max_tokens=10)
    assert len(openai_server.requests) == 1

    openai_server.fail(500)
    completion = provider(openai_server, max_retries=1).complete(MESSAGES, max_tokens=10)
    assert completion.text == "ok"
    assert len(openai_server.requests) == 3


def test_a_missing_key_for_a_remote_endpoint_is_a_configuration_error_naming_the_env_var(monkeypatch, openai_server):
    monkeypatch.delenv(OPENAI_KEY_ENV)
    remote = provider(openai_server, base_url="https://llm.example.invalid/v1")

    with pytest.raises(ConfigurationError, match=OPENAI_KEY_ENV):
        remote.complete(MESSAGES, max_tokens=10)


def test_a_remote_endpoint_with_no_api_key_env_is_a_configuration_error(openai_server):
    remote = provider(openai_server, base_url="https://llm.example.invalid/v1", api_key_env="")

    with pytest.raises(ConfigurationError, match="api_key_env"):
        remote.complete(MESSAGES, max_tokens=10)


def test_a_local_server_is_called_without_a_key(openai_server):
    openai_server.api_key = None

    completion = provider(openai_server, api_key_env="").complete(MESSAGES, max_tokens=10)

    assert completion.text == "ok"
    assert openai_server.last().headers["authorization"] == f"Bearer {LOCAL_PLACEHOLDER_KEY}"


def test_a_spec_with_no_model_is_a_configuration_error_before_any_request(openai_server):
    with pytest.raises(ConfigurationError, match="model"):
        provider(openai_server, model="").complete(MESSAGES, max_tokens=10)

    assert openai_server.requests == []


def test_openai_itself_is_sent_max_completion_tokens_and_other_servers_max_tokens():
    assert token_limit_field("https://api.openai.com/v1") == "max_completion_tokens"
    assert token_limit_field("http://localhost:11434/v1") == "max_tokens"
    assert token_limit_field("http://vllm.internal:8000/v1") == "max_tokens"
