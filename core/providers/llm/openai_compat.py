"""Chat completions on any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp, LM Studio).

What an endpoint takes is learned from what it refuses, never guessed from its host name: the
length cap is sent as ``max_tokens`` until an endpoint refuses it (OpenAI's reasoning models do),
then as ``max_completion_tokens``; JSON mode and ``reasoning_effort`` are dropped for an endpoint
that refuses them. A refused parameter is retried once without it; the lesson is kept for the
provider's life so the next call does not pay for it again.

Sampling is pinned: ``temperature`` (default 0) and ``seed`` from the provider's config go with every
request, so one turn is decided alike twice; an endpoint that refuses either is sent it no more. A
run of blank lines or spaces ends the answer (``stop``): a small model in JSON mode can emit
whitespace until its budget is spent, and such an answer is cut early, not paid for in full.

The answer's end is read back: ``finish_reason: length`` (or a reasoning model that spent its whole
budget thinking and said nothing) is a ``TruncatedError``, never a complete answer.
"""

from __future__ import annotations

import threading

import openai

from core.providers.errors import RefusedError, TransientError, TruncatedError, UnsupportedParameter
from core.providers.llm import sdk
from core.providers.llm.base import Completion

OPENAI_BASE_URL = "https://api.openai.com/v1"
JSON_RESPONSE_FORMAT = {"type": "json_object"}
TOKEN_FIELDS = ("max_tokens", "max_completion_tokens")
OPTIONAL = ("response_format", "reasoning_effort", "temperature", "seed", "stop", *TOKEN_FIELDS)
# a runaway of whitespace: no answer the purposes ask for holds one
RUNAWAY_WHITESPACE = ["\n\n\n\n\n", " " * 32, "\t" * 16]


class OpenAICompatProvider:
    def __init__(self, *, alias: str, spec):
        self.alias, self.spec = alias, spec
        self.model = spec.model
        self.base_url = spec.base_url or OPENAI_BASE_URL
        self._clients = sdk.ClientCache(self._new_client)
        self._lock = threading.Lock()
        self.token_field = "max_tokens"
        self.refused: set[str] = set()  # optional parameters this endpoint refused

    def _new_client(self, key: str) -> openai.OpenAI:
        return openai.OpenAI(
            api_key=key, base_url=self.base_url, timeout=self.spec.timeout_seconds, max_retries=self.spec.max_retries
        )

    def params(self, messages, *, model: str, max_tokens: int, json: bool) -> dict:
        params = {"model": model, "messages": messages}
        with self._lock:
            params[self.token_field] = max_tokens + (self.spec.reasoning_tokens or 0)
            if json and "response_format" not in self.refused:
                params["response_format"] = JSON_RESPONSE_FORMAT
            if self.spec.reasoning_effort and "reasoning_effort" not in self.refused:
                params["reasoning_effort"] = self.spec.reasoning_effort
            if "temperature" not in self.refused:
                params["temperature"] = self.spec.temperature
            if self.spec.seed >= 0 and "seed" not in self.refused:
                params["seed"] = self.spec.seed
            if "stop" not in self.refused:
                params["stop"] = RUNAWAY_WHITESPACE
        return params

    def complete(self, messages, *, max_tokens, json=False, purpose=None, inputs=None, timeout=None) -> Completion:
        model = sdk.require_model(alias=self.alias, spec=self.spec)
        key = sdk.api_key(alias=self.alias, spec=self.spec, base_url=self.base_url)
        params = self.params(messages, model=model, max_tokens=max_tokens, json=json)
        try:
            response = self._send(key, params, timeout)
        except UnsupportedParameter as refused:
            self._learn(refused.param)
            try:
                response = self._send(key, self.params(messages, model=model, max_tokens=max_tokens, json=json), timeout)
            except UnsupportedParameter as again:  # the next call starts without this one too
                self._learn(again.param)
                raise
        return self._completion(response, messages, model)

    def _send(self, key: str, params: dict, timeout: float | None = None):
        optional = tuple(name for name in OPTIONAL if name in params)
        with sdk.translated(openai, alias=self.alias, key_env=self.spec.api_key_env, optional=optional):
            client = self._clients.get(key)
            if timeout is not None:  # a caller's deadline: this request alone, and no retry past it
                client = client.with_options(timeout=max(timeout, 0.05), max_retries=0)
            return client.chat.completions.create(**params)

    def _learn(self, param: str) -> None:
        with self._lock:
            if param in TOKEN_FIELDS:
                self.token_field = next(f for f in TOKEN_FIELDS if f != param)
            else:
                self.refused.add(param)

    def _completion(self, response, messages, model) -> Completion:
        if not getattr(response, "choices", None):
            raise TransientError(f"providers.llm.{self.alias}: the endpoint answered no choices")
        choice = response.choices[0]
        text = choice.message.content or ""
        usage = getattr(response, "usage", None)
        if usage is None or usage.prompt_tokens is None or usage.completion_tokens is None:
            used, answered = sdk.estimated_tokens(messages, text)
        else:
            used, answered = usage.prompt_tokens, usage.completion_tokens
        details = getattr(usage, "completion_tokens_details", None)
        reasoning = getattr(details, "reasoning_tokens", None) or 0
        finish = choice.finish_reason or "stop"
        spent = {"input_tokens": used, "output_tokens": answered, "model": response.model or model, "finish": finish}
        refusal = getattr(choice.message, "refusal", None)
        if refusal or finish == "content_filter":
            raise RefusedError(f"providers.llm.{self.alias}: the model refused ({refusal or 'content filter'})", **spent)
        thought = _reasoning_text(choice.message)
        if finish == "length":
            hint = (f" after {reasoning} reasoning tokens; raise reasoning_tokens or set reasoning_effort = \"low\""
                    if reasoning else "")
            raise TruncatedError(
                f"providers.llm.{self.alias}: the answer was cut off at its token budget ({answered} output tokens{hint})",
                **spent,
            )
        if not text.strip() and (thought or reasoning):
            raise TruncatedError(
                f"providers.llm.{self.alias}: the model answered only reasoning ({reasoning or 'some'} reasoning tokens)"
                " and no content; raise reasoning_tokens or set reasoning_effort = \"low\"", **spent
            )
        return Completion(text=text, input_tokens=used, output_tokens=answered, model=spent["model"], finish=finish,
                          reasoning_tokens=reasoning)


def _reasoning_text(message) -> str:
    """The reasoning a server returned beside the content (vLLM/DeepSeek ``reasoning_content``, others ``reasoning``)."""
    extra = getattr(message, "model_extra", None) or {}
    return str(extra.get("reasoning_content") or extra.get("reasoning") or "")
