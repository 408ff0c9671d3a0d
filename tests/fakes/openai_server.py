"""A fake OpenAI-compatible server: ``POST /v1/chat/completions`` in the real wire format."""

from __future__ import annotations

import itertools
import time

from tests.fakes.http_fake import Answer, FakeServer, Recorded, word_count

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

    def chat_completion(self, body: dict, answer: Answer) -> dict:
        prompt = word_count(body.get("messages", []))
        completion = word_count(answer.text)
        prompt = prompt if answer.input_tokens is None else answer.input_tokens
        completion = completion if answer.output_tokens is None else answer.output_tokens
        message = {"role": "assistant", "content": answer.text, "refusal": answer.extra.get("refusal")}
        response = {
            "id": f"chatcmpl-fake{next(_ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", ""),
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": answer.extra.get("finish_reason", "stop")}
            ],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        }
        if answer.extra.get("no_usage"):
            del response["usage"]
        return response

    def error_body(self, status: int, message: str) -> dict:
        kind, code = ERROR_TYPES.get(status, ("server_error", None))
        return {"error": {"message": message or f"fake error {status}", "type": kind, "param": None, "code": code}}
