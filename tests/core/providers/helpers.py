"""Provider specs pointed at the fake servers, and the keys the fixtures put in the environment."""

from __future__ import annotations

from crewlet.config import schema

OPENAI_KEY_ENV = "CREWLET_TEST_OPENAI_KEY"
ANTHROPIC_KEY_ENV = "CREWLET_TEST_ANTHROPIC_KEY"
OPENAI_KEY = "sk-test-openai"
ANTHROPIC_KEY = "sk-ant-test"
TIMEOUT_SECONDS = 2.0



def openai_spec(server, **overrides) -> schema.ProviderSpec:
    fields = dict(
        kind="openai_compat", model="gpt-test", base_url=server.base_url, api_key_env=OPENAI_KEY_ENV,
        timeout_seconds=TIMEOUT_SECONDS,
    )
    return schema.ProviderSpec(**{**fields, **overrides})


def anthropic_spec(server, **overrides) -> schema.ProviderSpec:
    fields = dict(
        kind="anthropic", model="claude-test", base_url=server.base_url, api_key_env=ANTHROPIC_KEY_ENV,
        timeout_seconds=TIMEOUT_SECONDS,
    )
    return schema.ProviderSpec(**{**fields, **overrides})
