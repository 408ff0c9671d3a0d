"""Fake OpenAI and Anthropic servers, started per test, with their keys in the environment."""

from __future__ import annotations

import pytest

from tests.core.providers.helpers import ANTHROPIC_KEY, ANTHROPIC_KEY_ENV, OPENAI_KEY, OPENAI_KEY_ENV
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.openai_server import FakeOpenAIServer


@pytest.fixture
def openai_server(monkeypatch):
    monkeypatch.setenv(OPENAI_KEY_ENV, OPENAI_KEY)
    with FakeOpenAIServer() as server:
        server.api_key = OPENAI_KEY
        yield server


@pytest.fixture
def anthropic_server(monkeypatch):
    monkeypatch.setenv(ANTHROPIC_KEY_ENV, ANTHROPIC_KEY)
    with FakeAnthropicServer() as server:
        server.api_key = ANTHROPIC_KEY
        yield server
