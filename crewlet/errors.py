"""Typed errors the API maps to HTTP answers in one place (``crewlet.api``), and the body they answer with."""

from __future__ import annotations

from ninja import Schema
from pydantic import ConfigDict


class CrewletError(Exception):
    status = 400

    def __init__(self, message: str, **extra):
        super().__init__(message)
        self.message = message
        self.extra = extra


class BadInput(CrewletError):
    status = 422


class NotFound(CrewletError):
    status = 404


class Forbidden(CrewletError):
    status = 403


class Conflict(CrewletError):
    status = 409


class FieldErrorOut(Schema):
    field: str
    message: str


class ErrorOut(Schema):
    """Every error answer: what went wrong, and for bad input each field it is about."""

    model_config = ConfigDict(extra="allow")

    detail: str
    errors: list[FieldErrorOut] | None = None


# What each status means on this API; a route declares the ones it can answer (``error_responses``).
ERROR_MEANINGS = {
    400: "Malformed request (not JSON, or a suspicious header).",
    401: "Missing, malformed or revoked token.",
    403: "The token may not act as this seat.",
    404: "No such seat, row or builtin for this token.",
    409: "Conflicts with what is stored (a run id already used with another payload).",
    413: "The request body is larger than the server accepts.",
    422: "Invalid input; ``errors`` names each field.",
    503: "The database is not taking requests right now (read-only, or unreachable); retry after ``Retry-After`` seconds.",
}


def error_responses(*codes: int) -> dict[int, type[ErrorOut]]:
    """The ``response=`` entries of a route's error answers: every one has the ``ErrorOut`` body, and
    every route reads the database, so every one can answer 503."""
    unknown = set(codes) - set(ERROR_MEANINGS)
    if unknown:
        raise ValueError(f"undocumented error status {sorted(unknown)}")
    return {code: ErrorOut for code in (*codes, 503)}
