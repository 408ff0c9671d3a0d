"""The API's error answers as exceptions: the status picks the class, the message names the field."""

from __future__ import annotations


class CrewletAPIError(Exception):
    """A non-2xx answer: ``status``, the server's ``detail`` and, for a 422, every bad ``field``."""

    status: int = 0

    def __init__(self, status: int, detail: str, body: dict | None = None):
        self.status, self.detail, self.body = status, detail, body or {}
        super().__init__(f"{status}: {detail}")


class InvalidField(CrewletAPIError):
    """422: the request named a bad field; ``field`` is the first, ``fields`` all of them."""

    @property
    def fields(self) -> list[str]:
        errors = self.body.get("errors") or []
        named = [e.get("field", "") for e in errors if e.get("field")]
        if not named and self.body.get("field"):
            named = [self.body["field"]]
        return named

    @property
    def field(self) -> str:
        return (self.fields or [""])[0]

    def __str__(self) -> str:
        problems = "; ".join(f"{e.get('field')}: {e.get('message')}" for e in self.body.get("errors") or [])
        return f"422 {self.field or 'body'}: {problems or self.detail}"


class Unauthorized(CrewletAPIError):
    """401: no token, or an unknown, revoked or expired one."""


class Forbidden(CrewletAPIError):
    """403: the token may not act as this seat (another seat's, or an operator's for a turn)."""


class NotFound(CrewletAPIError):
    """404: no such seat, tool or skill (``field`` says which argument, when the server names it)."""

    @property
    def field(self) -> str:
        return self.body.get("field", "")


class Conflict(CrewletAPIError):
    """409: e.g. a run id that belongs to another seat's turn."""


BY_STATUS = {401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Conflict, 422: InvalidField}


def from_response(status: int, body) -> CrewletAPIError:
    body = body if isinstance(body, dict) else {"detail": str(body)}
    detail = body.get("detail") or f"HTTP {status}"
    return BY_STATUS.get(status, CrewletAPIError)(status, detail, body)
