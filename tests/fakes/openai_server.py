"""A fake OpenAI-compatible server: ``POST /v1/chat/completions`` in the real wire format."""

from __future__ import annotations

import itertools
import json
import time

from tests.fakes.http_fake import Answer, FakeServer, Recorded, word_count
from tests.fakes.openai_strict import tool_problems

ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    422: ("invalid_request_error", None),
    429: ("requests", "rate_limit_exceeded"),
}

_ids = itertools.count(1)


class FakeOpenAIServer(FakeServer):
    routes = {("POST", "/v1/chat/completions"): "chat_completion"}

    @property
    def base_url(self) -> str:
        """What ``providers.llm.<alias>.base_url`` names for this server."""
        return f"{self.url}/v1"

    def key_of(self, request: Recorded) -> str:
        auth = request.headers.get("authorization", "")
        return auth.removeprefix("Bearer ")

    def check(self, request: Recorded):
        """Also refuses, as the real API does, a ``strict`` tool whose schema breaks strict mode."""
        refused = super().check(request)
        if refused is None and isinstance(request.body, dict):
            problems = tool_problems(request.body.get("tools") or [])
            if problems:
                return 400, {}, self.error_body(400, " ".join(problems))
        return refused

    def answer_tool_calls(self, *calls: tuple[str, dict], text: str | None = None):
        """Queue an assistant message that calls these tools: ``("use_skill", {"name": "deploy"})``."""
        self.answer(text or "", tool_calls=[(name, dict(arguments)) for name, arguments in calls])

    def chat_completion(self, body: dict, answer: Answer) -> dict:
        budget = body.get("max_completion_tokens") or body.get("max_tokens") or 0
        text, finish, reasoning = answer.text, answer.extra.get("finish_reason", "stop"), answer.extra.get("reasoning")
        if self.mode == "length":
            text, finish = cut(text), "length"
        if self.mode == "reasoning_only":
            text, reasoning = "", "The user wants a JSON object. Let me think about which fields apply..."
        prompt = word_count(body.get("messages", []))
        completion = word_count(text)
        prompt = prompt if answer.input_tokens is None else answer.input_tokens
        completion = completion if answer.output_tokens is None else answer.output_tokens
        reasoning_tokens = 0
        if reasoning:
            reasoning_tokens = max(budget, 1) - completion if self.mode == "reasoning_only" else word_count(reasoning)
            completion += reasoning_tokens
        message = {"role": "assistant", "content": text, "refusal": answer.extra.get("refusal")}
        if reasoning:
            message["reasoning_content"] = reasoning
        if answer.extra.get("tool_calls"):
            message["content"] = text or None
            message["tool_calls"] = [
                {"id": f"call_fake{next(_ids)}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(arguments)}}
                for name, arguments in answer.extra["tool_calls"]
            ]
            if "finish_reason" not in answer.extra and self.mode != "length":
                finish = "tool_calls"
        response = {
            "id": f"chatcmpl-fake{next(_ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", ""),
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
            ],
            "usage": {
                "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                "completion_tokens_details": {"reasoning_tokens": reasoning_tokens},
            },
        }
        if answer.extra.get("no_usage"):
            del response["usage"]
        return response

    def error_body(self, status: int, message: str) -> dict:
        kind, code = ERROR_TYPES.get(status, ("server_error", None))
        return {"error": {"message": message or f"fake error {status}", "type": kind, "param": None, "code": code}}

    def unsupported_body(self, param: str) -> dict:
        if param == "max_tokens":  # OpenAI's own words to a reasoning model's caller
            message = "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
        elif param == "response_format":  # LM Studio's
            message = "'response_format.type' must be 'json_schema' or 'text'"
        else:
            message = f"Unrecognized request argument supplied: {param}"
        return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": "unsupported_parameter"}}


def cut(text: str) -> str:
    """The first half of ``text``: an answer stopped at its budget, mid-word or mid-JSON."""
    return text[: max(1, len(text) // 2)]
