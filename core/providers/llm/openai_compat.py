"""Chat completions on any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp server)."""

from __future__ import annotations

from urllib.parse import urlsplit

import openai

from core.providers.errors import RefusedError, TransientError
from core.providers.llm import sdk
from core.providers.llm.base import Completion

OPENAI_BASE_URL = "https://api.openai.com/v1"
OPENAI_HOST = "api.openai.com"
JSON_RESPONSE_FORMAT = {"type": "json_object"}


class OpenAICompatProvider:
    def __init__(self, *, alias: str, spec):
        self.alias, self.spec = alias, spec
        self.model = spec.model
        self.base_url = spec.base_url or OPENAI_BASE_URL
        self._clients = sdk.ClientCache(self._new_client)

    def _new_client(self, key: str) -> openai.OpenAI:
        return openai.OpenAI(
            api_key=key, base_url=self.base_url, timeout=self.spec.timeout_seconds, max_retries=self.spec.max_retries
        )

    def complete(self, messages, *, max_tokens, json=False, purpose=None, inputs=None) -> Completion:
        model = sdk.require_model(alias=self.alias, spec=self.spec)
        key = sdk.api_key(alias=self.alias, spec=self.spec, base_url=self.base_url)
        params = {"model": model, "messages": messages, token_limit_field(self.base_url): max_tokens}
        if json:
            params["response_format"] = JSON_RESPONSE_FORMAT
        with sdk.translated(openai, alias=self.alias, key_env=self.spec.api_key_env):
            response = self._clients.get(key).chat.completions.create(**params)
        return self._completion(response, messages, model)

    def _completion(self, response, messages, model) -> Completion:
        if not getattr(response, "choices", None):
            raise TransientError(f"providers.llm.{self.alias}: the endpoint answered no choices")
        choice = response.choices[0]
        refusal = getattr(choice.message, "refusal", None)
        if refusal or choice.finish_reason == "content_filter":
            raise RefusedError(f"providers.llm.{self.alias}: the model refused ({refusal or 'content filter'})")
        text = choice.message.content or ""
        usage = getattr(response, "usage", None)
        if usage is None or usage.prompt_tokens is None or usage.completion_tokens is None:
            used, answered = sdk.estimated_tokens(messages, text)
        else:
            used, answered = usage.prompt_tokens, usage.completion_tokens
        return Completion(text=text, input_tokens=used, output_tokens=answered, model=response.model or model)


def token_limit_field(base_url: str) -> str:
    """OpenAI's own API takes ``max_completion_tokens`` (its reasoning models refuse ``max_tokens``);
    vLLM, Ollama and llama.cpp read ``max_tokens``."""
    host = (urlsplit(base_url).hostname or "").lower()
    return "max_completion_tokens" if host == OPENAI_HOST else "max_tokens"
