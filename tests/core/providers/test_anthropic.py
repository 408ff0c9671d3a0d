"""The Anthropic provider against a local fake speaking ``/v1/messages``."""

from __future__ import annotations

import pytest

from core.providers.errors import ConfigurationError, RateLimitedError, RefusedError, TransientError
from core.providers.llm.anthropic import JSON_INSTRUCTION, AnthropicProvider
from tests.core.providers.helpers import ANTHROPIC_KEY, ANTHROPIC_KEY_ENV, anthropic_spec

MESSAGES = [{"role": "system", "content": "You judge notes."}, {"role": "user", "content": "Keep this one?"}]


def provider(server, **overrides) -> AnthropicProvider:
    return AnthropicProvider(alias="claude", spec=anthropic_spec(server, **overrides))


def test_system_prompt_is_split_out_of_the_messages(anthropic_server):
    provider(anthropic_server).complete(MESSAGES, max_tokens=64)

    request = anthropic_server.last()
    assert request.path == "/v1/messages"
    assert request.body["model"] == "claude-test"
    assert request.body["max_tokens"] == 64
    assert request.body["system"] == "You judge notes."
    assert request.body["messages"] == [{"role": "user", "content": "Keep this one?"}]


def test_messages_without_a_system_prompt_send_no_system_field(anthropic_server):
    provider(anthropic_server).complete([{"role": "user", "content": "hi"}], max_tokens=8)

    assert "system" not in anthropic_server.last().body


def test_json_call_adds_the_json_instruction_to_the_system_prompt(anthropic_server):
    provider(anthropic_server).complete(MESSAGES, max_tokens=8, json=True)

    assert anthropic_server.last().body["system"] == f"You judge notes.\n\n{JSON_INSTRUCTION}"


def test_key_is_read_from_the_named_env_var(anthropic_server):
    provider(anthropic_server).complete(MESSAGES, max_tokens=8)

    assert anthropic_server.key_of(anthropic_server.last()) == ANTHROPIC_KEY


def test_text_usage_and_model_are_read_back_from_the_response(anthropic_server):
    anthropic_server.answer("NOOP", input_tokens=321, output_tokens=7)

    completion = provider(anthropic_server).complete(MESSAGES, max_tokens=8)

    assert completion.text == "NOOP"
    assert (completion.input_tokens, completion.output_tokens) == (321, 7)
    assert completion.model == "claude-test"


def test_prompt_cache_tokens_are_counted_as_input(anthropic_server):
    anthropic_server.answer(
        "NOOP", input_tokens=10, output_tokens=2, usage={"cache_creation_input_tokens": 100, "cache_read_input_tokens": 5}
    )

    completion = provider(anthropic_server).complete(MESSAGES, max_tokens=8)

    assert completion.input_tokens == 115


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (401, ConfigurationError),
        (403, ConfigurationError),
        (404, ConfigurationError),
        (400, RefusedError),
        (413, RefusedError),
        (429, RateLimitedError),
        (500, TransientError),
        (529, TransientError),
    ],
)
def test_each_error_status_maps_to_its_typed_error(anthropic_server, status, error):
    anthropic_server.fail(status)

    with pytest.raises(error) as caught:
        provider(anthropic_server).complete(MESSAGES, max_tokens=8)

    assert type(caught.value) is error
    assert str(status) in str(caught.value)


def test_a_rejected_key_is_a_configuration_error_naming_the_env_var(anthropic_server):
    anthropic_server.api_key = "sk-ant-someone-else"

    with pytest.raises(ConfigurationError, match=ANTHROPIC_KEY_ENV):
        provider(anthropic_server).complete(MESSAGES, max_tokens=8)


def test_an_unknown_model_is_a_configuration_error(anthropic_server):
    anthropic_server.models = {"claude-other"}

    with pytest.raises(ConfigurationError, match="404"):
        provider(anthropic_server).complete(MESSAGES, max_tokens=8)


def test_a_refusal_stop_reason_is_refused(anthropic_server):
    anthropic_server.answer("", stop_reason="refusal")

    with pytest.raises(RefusedError):
        provider(anthropic_server).complete(MESSAGES, max_tokens=8)


def test_a_stalled_server_times_out_as_transient(anthropic_server):
    anthropic_server.stall(5)

    with pytest.raises(TransientError, match="timed out"):
        provider(anthropic_server, timeout_seconds=0.3).complete(MESSAGES, max_tokens=8)


def test_overloaded_is_retried_when_max_retries_allows(anthropic_server):
    anthropic_server.fail(529)

    completion = provider(anthropic_server, max_retries=1).complete(MESSAGES, max_tokens=8)

    assert completion.text == "ok"
    assert len(anthropic_server.requests) == 2


def test_a_missing_key_for_anthropic_itself_is_a_configuration_error_naming_the_env_var(monkeypatch, anthropic_server):
    monkeypatch.delenv(ANTHROPIC_KEY_ENV)
    remote = provider(anthropic_server, base_url="")

    with pytest.raises(ConfigurationError, match=ANTHROPIC_KEY_ENV):
        remote.complete(MESSAGES, max_tokens=8)
