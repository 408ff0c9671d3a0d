"""``CrewletClient``: one method per call a runtime makes, each answering a typed model."""

from __future__ import annotations

from typing import Any, Literal

import httpx2

from crewlet_client.errors import from_response
from crewlet_client.models import Memory, Prefetch, ToolResult, TurnAccepted

API = "/api/v1"
ToolFormat = Literal["default", "openai", "openai-responses", "anthropic", "mcp"]


class CrewletClient:
    """Acts as one seat with that seat's token. ``transport`` is any httpx2 transport (tests pass a
    ``WSGITransport`` over the Django app)."""

    def __init__(self, base_url: str, *, token: str, seat: str, timeout: float = 30.0,
                 transport: httpx2.BaseTransport | None = None):
        self.seat = seat
        self._http = httpx2.Client(base_url=base_url.rstrip("/") + API, timeout=timeout, transport=transport,
                                   headers={"Authorization": f"Bearer {token}"})

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> CrewletClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _call(self, method: str, path: str, *, json: Any = None, params: dict | None = None) -> Any:
        response = self._http.request(method, path, json=json, params=params)
        try:
            body = response.json()
        except ValueError:
            body = {"detail": response.text[:500]}
        if response.status_code >= 400:
            raise from_response(response.status_code, body)
        return body

    # turn start
    def prefetch(self, *, run_id: str, ask: str | None = None, label: str | None = None,
                 subject_is_label: bool | None = None, interactions: list[dict] | None = None,
                 requires_recon: bool | None = None, conversation_id: str | None = None,
                 conversation_kind: str | None = None, thread: dict | None = None, tools: list[str] | None = None,
                 **more: Any) -> Prefetch:
        """The turn-start blocks; the same ``run_id`` always answers the same (frozen) blocks.

        Fields left ``None`` are not sent (the server's defaults apply).
        """
        given = {"ask": ask, "label": label, "subject_is_label": subject_is_label, "interactions": interactions,
                 "requires_recon": requires_recon, "conversation_id": conversation_id,
                 "conversation_kind": conversation_kind, "thread": thread, "tools": tools, **more}
        body = {"run_id": run_id, **{k: v for k, v in given.items() if v is not None}}
        return Prefetch.model_validate(self._call("POST", f"/agents/{self.seat}/prefetch", json=body))

    # during the turn
    def tools(self, format: ToolFormat = "default") -> list[dict[str, Any]]:
        """The builtins available to this seat, shaped for ``format``'s SDK (``openai`` is strict mode)."""
        return self._call("GET", "/tools", params={"format": format})

    def call_tool(self, name: str, arguments: dict | None = None, *, run_id: str = "") -> ToolResult:
        body = {"run_id": run_id, "arguments": arguments or {}}
        return ToolResult.model_validate(self._call("POST", f"/agents/{self.seat}/tools/{name}", json=body))

    # after the turn
    def post_turn(self, *, run_id: str, conversation_kind: str, review_outcome: str, **record: Any) -> TurnAccepted:
        """The ``turn_completed`` record (every other field by keyword, as docs/integration.md lists)."""
        body = {"run_id": run_id, "seat": self.seat, "conversation_kind": conversation_kind,
                "review_outcome": review_outcome, **record}
        return TurnAccepted.model_validate(self._call("POST", "/turns", json=body))

    # reading
    def memory(self, *, limit: int = 20, offset: int = 0) -> Memory:
        return Memory.model_validate(self._call("GET", f"/agents/{self.seat}/memory",
                                                params={"limit": limit, "offset": offset}))
