"""Chat completions on Anthropic's Messages API with the official SDK."""

from __future__ import annotations

import anthropic

from core.providers.errors import RefusedError, TruncatedError, UnsupportedParameter
from core.providers.llm import sdk
from core.providers.llm.base import Completion

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
# the Messages API has no JSON mode; a purpose that wants an object says so in its system prompt too
JSON_INSTRUCTION = "Answer with a single JSON object and nothing else."


class AnthropicProvider:
    def __init__(self, *, alias: str, spec):
        self.alias, self.spec = alias, spec
        self.model = spec.model
        self.base_url = spec.base_url or ANTHROPIC_BASE_URL
        self._clients = sdk.ClientCache(self._new_client)
        self.sends_temperature = True

    def _new_client(self, key: str) -> anthropic.Anthropic:
        return anthropic.Anthropic(
            api_key=key, base_url=self.base_url, timeout=self.spec.timeout_seconds, max_retries=self.spec.max_retries
        )

    def complete(self, messages, *, max_tokens, json=False, purpose=None, inputs=None, timeout=None) -> Completion:
        model = sdk.require_model(alias=self.alias, spec=self.spec)
        key = sdk.api_key(alias=self.alias, spec=self.spec, base_url=self.base_url)
        system, turns = split_system(messages)
        if json:
            system = f"{system}\n\n{JSON_INSTRUCTION}" if system else JSON_INSTRUCTION
        params = {"model": model, "max_tokens": max_tokens + (self.spec.reasoning_tokens or 0), "messages": turns}
        if system:
            params["system"] = system
        try:
            response = self._send(key, params, timeout)
        except UnsupportedParameter:  # a model that takes no temperature: sent none from now on
            self.sends_temperature = False
            response = self._send(key, params, timeout)
        return self._completion(response, turns, model)

    def _send(self, key: str, params: dict, timeout: float | None):
        # pinned sampling: the Messages API takes a temperature up to 1 (the SDK no longer names it) and no seed
        extra = {"temperature": min(self.spec.temperature, 1.0)} if self.sends_temperature else {}
        optional = ("temperature",) if extra else ()
        with sdk.translated(anthropic, alias=self.alias, key_env=self.spec.api_key_env, optional=optional):
            client = self._clients.get(key)
            if timeout is not None:  # a caller's deadline: this request alone, and no retry past it
                client = client.with_options(timeout=max(timeout, 0.05), max_retries=0)
            return client.messages.create(**params, extra_body=extra or None)

    def _completion(self, response, turns, model) -> Completion:
        # thinking blocks (extended thinking) are not the answer: only text blocks are read
        text = "".join(block.text for block in response.content or [] if getattr(block, "type", "") == "text")
        usage = getattr(response, "usage", None)
        if usage is None or usage.input_tokens is None or usage.output_tokens is None:
            used, answered = sdk.estimated_tokens(turns, text)
        else:
            cached = (getattr(usage, "cache_creation_input_tokens", None) or 0) + (
                getattr(usage, "cache_read_input_tokens", None) or 0
            )
            used, answered = usage.input_tokens + cached, usage.output_tokens
        finish = response.stop_reason or "end_turn"
        spent = {"input_tokens": used, "output_tokens": answered, "model": response.model or model, "finish": finish}
        if finish == "refusal":
            raise RefusedError(f"providers.llm.{self.alias}: the model refused this input", **spent)
        if finish == "max_tokens":
            raise TruncatedError(
                f"providers.llm.{self.alias}: the answer was cut off at its token budget ({answered} output tokens)",
                **spent,
            )
        return Completion(text=text, input_tokens=used, output_tokens=answered, model=spent["model"], finish=finish)


def split_system(messages: list[dict]) -> tuple[str, list[dict]]:
    """The system messages joined into Anthropic's ``system`` field, and the rest in order."""
    system = [str(m.get("content", "")) for m in messages if m.get("role") == "system"]
    turns = [{"role": m["role"], "content": m["content"]} for m in messages if m.get("role") != "system"]
    return "\n\n".join(part for part in system if part), turns
