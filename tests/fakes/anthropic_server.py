"""A fake Anthropic server: ``POST /v1/messages`` in the real wire format."""

from __future__ import annotations

import itertools

from tests.fakes.http_fake import Answer, FakeServer, Recorded, word_count
from tests.fakes.openai_server import cut

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}

_ids = itertools.count(1)


class FakeAnthropicServer(FakeServer):
    routes = {("POST", "/v1/messages"): "message"}

    @property
    def base_url(self) -> str:
        """What ``providers.llm.<alias>.base_url`` names for this server (the SDK adds ``/v1``)."""
        return self.url

    def key_of(self, request: Recorded) -> str:
        # the API's documented header is x-api-key; the SDK in use sends the key as a bearer token
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
        return request.headers.get("x-api-key") or bearer

    def check(self, request: Recorded):
        """Also refuses, as the real API does, a tool without a name or an object ``input_schema``."""
        refused = super().check(request)
        if refused is None and isinstance(request.body, dict):
            for i, tool in enumerate(request.body.get("tools") or []):
                schema = tool.get("input_schema")
                if not tool.get("name") or not isinstance(schema, dict) or schema.get("type") != "object":
                    return 400, {}, self.error_body(400, f"tools.{i}.input_schema: Input should be an object schema")
                extra = set(tool) - {"name", "description", "input_schema", "type", "cache_control", "strict"}
                if extra:
                    return 400, {}, self.error_body(400, f"tools.{i}.{sorted(extra)[0]}: Extra inputs are not permitted")
        return refused

    def answer_tool_use(self, name: str, arguments: dict):
        """Queue an assistant message whose content is one ``tool_use`` block."""
        self.answer("", tool_use=(name, dict(arguments)), stop_reason="tool_use")

    def message(self, body: dict, answer: Answer) -> dict:
        text, stop = answer.text, answer.extra.get("stop_reason", "end_turn")
        content = []
        if self.mode == "length":
            text, stop = cut(text), "max_tokens"
        if self.mode == "reasoning_only":
            text, stop = "", "max_tokens"
            content.append({"type": "thinking", "thinking": "Let me think about which fields apply...", "signature": "x"})
        used = word_count(body.get("messages", [])) + word_count(body.get("system", ""))
        used = used if answer.input_tokens is None else answer.input_tokens
        answered = word_count(text) if answer.output_tokens is None else answer.output_tokens
        if self.mode == "reasoning_only":
            answered = body.get("max_tokens", answered)
        if "tool_use" in answer.extra:
            content = self.content(answer)
        elif text or not content:
            content.append({"type": "text", "text": text})
        usage = {"input_tokens": used, "output_tokens": answered}
        usage.update(answer.extra.get("usage", {}))
        return {
            "id": f"msg_fake{next(_ids)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", ""),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }

    def content(self, answer: Answer) -> list[dict]:
        if "tool_use" in answer.extra:
            name, arguments = answer.extra["tool_use"]
            return [{"type": "tool_use", "id": f"toolu_fake{next(_ids)}", "name": name, "input": arguments}]
        return [{"type": "text", "text": answer.text}]

    def error_body(self, status: int, message: str) -> dict:
        kind = ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message or f"fake error {status}"}}
