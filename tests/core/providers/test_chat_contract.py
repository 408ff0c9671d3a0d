"""One contract for every SDK-backed chat provider, run against local fakes of both wire formats.

Each test that holds for both kinds is parametrised over the fake OpenAI-compatible server and the
fake Anthropic server; what only one API has (JSON mode, the system field, learned parameters) is
tested on its own kind below.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass

import pytest

from core.providers.errors import (
    ConfigurationError,
    RateLimitedError,
    RefusedError,
    TransientError,
    TruncatedError,
    UnsupportedParameter,
)
from core.providers.llm.anthropic import JSON_INSTRUCTION, AnthropicProvider
from core.providers.llm.openai_compat import OpenAICompatProvider
from core.providers.llm.sdk import LOCAL_PLACEHOLDER_KEY
from tests.core.providers.helpers import (
    ANTHROPIC_KEY,
    ANTHROPIC_KEY_ENV,
    OPENAI_KEY,
    OPENAI_KEY_ENV,
    anthropic_spec,
    openai_spec,
)
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.openai_server import FakeOpenAIServer

MESSAGES = [{"role": "system", "content": "You judge notes."}, {"role": "user", "content": "Keep this one?"}]


@dataclass
class Kind:
    name: str
    server: object
    key: str
    key_env: str

    def provider(self, **overrides):
        if self.name == "openai":
            return OpenAICompatProvider(alias="gpt", spec=openai_spec(self.server, **overrides))
        return AnthropicProvider(alias="claude", spec=anthropic_spec(self.server, **overrides))


def _start(name: str, monkeypatch, mode: str = ""):
    server_class, key, env = (
        (FakeOpenAIServer, OPENAI_KEY, OPENAI_KEY_ENV) if name == "openai" else (FakeAnthropicServer, ANTHROPIC_KEY, ANTHROPIC_KEY_ENV)
    )
    monkeypatch.setenv(env, key)
    server = server_class(mode=mode).start()
    server.api_key = key
    return Kind(name, server, key, env)


@pytest.fixture(params=["openai", "anthropic"])
def kind(request, monkeypatch):
    found = _start(request.param, monkeypatch)
    yield found
    found.server.close()


@pytest.fixture
def started(monkeypatch):
    """Start a fake of a named kind in a named mode: ``started("openai", "length")``."""
    servers = []

    def start(name: str, mode: str = "") -> Kind:
        found = _start(name, monkeypatch, mode)
        servers.append(found.server)
        return found

    yield start
    for server in servers:
        server.close()


# the contract both kinds keep ----------------------------------------------------------------


def test_text_usage_model_and_how_it_ended_are_read_back(kind):
    kind.server.answer('{"tier": "NOOP"}', input_tokens=123, output_tokens=45)

    completion = kind.provider().complete(MESSAGES, max_tokens=50)

    assert completion.text == '{"tier": "NOOP"}'
    assert (completion.input_tokens, completion.output_tokens) == (123, 45)
    assert completion.model == kind.server.last().body["model"]
    assert completion.finish in ("stop", "end_turn")


def test_the_key_is_read_from_the_named_env_var_at_call_time(kind, monkeypatch):
    provider = kind.provider()
    provider.complete(MESSAGES, max_tokens=10)
    assert kind.server.key_of(kind.server.last()) == kind.key

    monkeypatch.setenv(kind.key_env, "sk-rotated")
    kind.server.api_key = "sk-rotated"
    provider.complete(MESSAGES, max_tokens=10)

    assert kind.server.key_of(kind.server.last()) == "sk-rotated"


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
        (529, TransientError),
    ],
)
def test_each_error_status_maps_to_its_typed_error(kind, status, error):
    kind.server.fail(status)

    with pytest.raises(error) as caught:
        kind.provider(max_retries=0).complete(MESSAGES, max_tokens=10)

    assert type(caught.value) is error
    assert str(status) in str(caught.value)


def test_a_rejected_key_is_a_configuration_error_naming_the_env_var(kind):
    kind.server.api_key = "sk-someone-else"

    with pytest.raises(ConfigurationError, match=kind.key_env):
        kind.provider().complete(MESSAGES, max_tokens=10)


def test_an_unknown_model_is_a_configuration_error(kind):
    kind.server.models = {"some-other-model"}

    with pytest.raises(ConfigurationError, match="404"):
        kind.provider().complete(MESSAGES, max_tokens=10)


def test_a_stalled_server_times_out_as_transient(kind):
    kind.server.stall(5)

    with pytest.raises(TransientError, match="timed out"):
        kind.provider(timeout_seconds=0.3, max_retries=0).complete(MESSAGES, max_tokens=10)


def test_transient_failures_are_retried_by_default_with_the_sdks_bounded_backoff(kind):
    kind.server.fail(429)
    kind.server.fail(503)

    completion = kind.provider().complete(MESSAGES, max_tokens=10)

    assert completion.text == "ok"
    assert len(kind.server.requests) == 3


def test_max_retries_zero_sends_one_request(kind):
    kind.server.fail(500)

    with pytest.raises(TransientError):
        kind.provider(max_retries=0).complete(MESSAGES, max_tokens=10)

    assert len(kind.server.requests) == 1


def test_a_spec_with_no_model_is_a_configuration_error_before_any_request(kind):
    with pytest.raises(ConfigurationError, match="model") as caught:
        kind.provider(model="").complete(MESSAGES, max_tokens=10)

    assert caught.value.sent is False
    assert kind.server.requests == []


def test_a_missing_key_for_a_remote_endpoint_names_the_env_var_before_any_request(kind, monkeypatch):
    monkeypatch.delenv(kind.key_env)

    with pytest.raises(ConfigurationError, match=kind.key_env) as caught:
        kind.provider(base_url="https://llm.example.invalid/v1").complete(MESSAGES, max_tokens=10)

    assert caught.value.sent is False


def test_an_unreachable_endpoint_is_transient(kind):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]

    with pytest.raises(TransientError, match="could not reach"):
        kind.provider(base_url=f"http://127.0.0.1:{closed_port}/v1", max_retries=0).complete(MESSAGES, max_tokens=10)


def test_an_answer_cut_at_its_budget_is_truncated_and_carries_its_usage(started):
    for name in ("openai", "anthropic"):
        kind = started(name, "length")
        kind.server.answer('{"classification": "LONG", "content": "Ana prefers short answers"}', output_tokens=20)

        with pytest.raises(TruncatedError, match="cut off") as caught:
            kind.provider().complete(MESSAGES, max_tokens=20)

        assert caught.value.output_tokens == 20 and caught.value.input_tokens > 0
        assert caught.value.finish in ("length", "max_tokens")


def test_a_reasoning_only_answer_is_truncated_not_an_empty_answer(started):
    for name in ("openai", "anthropic"):
        kind = started(name, "reasoning_only")

        with pytest.raises(TruncatedError, match="reasoning|cut off") as caught:
            kind.provider().complete(MESSAGES, max_tokens=40)

        assert caught.value.output_tokens == 40


def test_a_refusal_is_refused_with_its_usage(kind):
    if kind.name == "openai":
        kind.server.answer("", refusal="I can't help with that.", output_tokens=6)
    else:
        kind.server.answer("", stop_reason="refusal", output_tokens=6)

    with pytest.raises(RefusedError) as caught:
        kind.provider().complete(MESSAGES, max_tokens=10)

    assert caught.value.output_tokens == 6


def test_reasoning_tokens_are_added_to_the_budget_sent(kind):
    kind.provider(reasoning_tokens=1000).complete(MESSAGES, max_tokens=40)

    body = kind.server.last().body
    assert body.get("max_tokens", body.get("max_completion_tokens")) == 1040


# OpenAI-compatible endpoints -----------------------------------------------------------------


def test_openai_request_carries_model_messages_and_max_tokens(started):
    kind = started("openai")
    kind.provider().complete(MESSAGES, max_tokens=77)

    request = kind.server.last()
    assert request.path == "/v1/chat/completions"
    assert request.body["messages"] == MESSAGES
    assert request.body["max_tokens"] == 77
    assert "response_format" not in request.body and "reasoning_effort" not in request.body


def test_openai_json_call_asks_for_a_json_object_response_format(started):
    kind = started("openai")
    kind.provider().complete(MESSAGES, max_tokens=10, json=True)

    assert kind.server.last().body["response_format"] == {"type": "json_object"}


def test_an_endpoint_that_refuses_json_mode_is_asked_again_without_it_and_remembered(started):
    kind = started("openai", "rejects_response_format")
    provider = kind.provider()

    assert provider.complete(MESSAGES, max_tokens=10, json=True).text == "ok"
    provider.complete(MESSAGES, max_tokens=10, json=True)

    sent = [("response_format" in r.body) for r in kind.server.requests]
    assert sent == [True, False, False]


def test_an_endpoint_that_refuses_max_tokens_is_sent_max_completion_tokens(started):
    kind = started("openai", "rejects_max_tokens")
    provider = kind.provider()

    provider.complete(MESSAGES, max_tokens=33)
    provider.complete(MESSAGES, max_tokens=34)

    bodies = [r.body for r in kind.server.requests]
    assert [("max_tokens" in b, b.get("max_completion_tokens")) for b in bodies] == [(True, None), (False, 33), (False, 34)]


def test_a_parameter_refused_again_after_the_retry_is_a_configuration_error(started):
    kind = started("openai")
    kind.server.rejects = {"response_format", "reasoning_effort"}

    with pytest.raises(UnsupportedParameter) as caught:
        kind.provider(reasoning_effort="low").complete(MESSAGES, max_tokens=10, json=True)

    assert isinstance(caught.value, ConfigurationError)
    assert len(kind.server.requests) == 2


def test_reasoning_effort_is_sent_when_configured(started):
    kind = started("openai")
    kind.provider(reasoning_effort="low").complete(MESSAGES, max_tokens=10)

    assert kind.server.last().body["reasoning_effort"] == "low"


def test_a_429_then_200_server_answers_within_the_default_retries(started):
    kind = started("openai", "rate_limited_once")

    assert kind.provider().complete(MESSAGES, max_tokens=10).text == "ok"
    assert len(kind.server.requests) == 2


def test_an_openai_answer_without_usage_is_counted_by_estimate_not_as_zero(started):
    kind = started("openai")
    kind.server.answer("three short words", no_usage=True)

    completion = kind.provider().complete(MESSAGES, max_tokens=10)

    assert (completion.input_tokens, completion.output_tokens) == (6, 3)


def test_a_local_server_is_called_without_a_key(started):
    kind = started("openai")
    kind.server.api_key = None

    completion = kind.provider(api_key_env="").complete(MESSAGES, max_tokens=10)

    assert completion.text == "ok"
    assert kind.server.last().headers["authorization"] == f"Bearer {LOCAL_PLACEHOLDER_KEY}"


def test_a_remote_endpoint_with_no_api_key_env_is_a_configuration_error(started):
    kind = started("openai")

    with pytest.raises(ConfigurationError, match="api_key_env"):
        kind.provider(base_url="https://llm.example.invalid/v1", api_key_env="").complete(MESSAGES, max_tokens=10)


# Anthropic's Messages API --------------------------------------------------------------------


def test_anthropic_system_prompt_is_split_out_of_the_messages(started):
    kind = started("anthropic")
    kind.provider().complete(MESSAGES, max_tokens=64)

    request = kind.server.last()
    assert request.path == "/v1/messages"
    assert request.body["max_tokens"] == 64
    assert request.body["system"] == "You judge notes."
    assert request.body["messages"] == [{"role": "user", "content": "Keep this one?"}]


def test_anthropic_messages_without_a_system_prompt_send_no_system_field(started):
    kind = started("anthropic")
    kind.provider().complete([{"role": "user", "content": "hi"}], max_tokens=8)

    assert "system" not in kind.server.last().body


def test_anthropic_json_call_adds_the_json_instruction_to_the_system_prompt(started):
    kind = started("anthropic")
    kind.provider().complete(MESSAGES, max_tokens=8, json=True)

    assert kind.server.last().body["system"] == f"You judge notes.\n\n{JSON_INSTRUCTION}"


def test_anthropic_prompt_cache_tokens_are_counted_as_input(started):
    kind = started("anthropic")
    kind.server.answer(
        "NOOP", input_tokens=10, output_tokens=2, usage={"cache_creation_input_tokens": 100, "cache_read_input_tokens": 5}
    )

    assert kind.provider().complete(MESSAGES, max_tokens=8).input_tokens == 115
