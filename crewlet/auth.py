"""API authentication: per-seat bearer tokens and operator tokens, stored hashed."""

from __future__ import annotations

from collections.abc import Sequence

from ninja.security import HttpBearer

from crewlet.errors import Forbidden
from crewlet.models import ApiToken, Seat
from crewlet.tokens import SEAT_ROWS, authenticate


class SeatAuth(HttpBearer):
    """A seat's own token (operator tokens are accepted too; ``require_seat`` narrows them), loaded with
    the rows of its seat that ``related`` names (``tokens.authenticate``)."""

    def __init__(self, related: Sequence[str] = SEAT_ROWS):
        super().__init__()
        self.related = tuple(related)

    def authenticate(self, request, token):
        found = authenticate(token, self.related)
        if found is None or (found.kind == ApiToken.SEAT and (found.seat is None or not found.seat.active)):
            return None
        request.api_token = found
        return found


class OperatorAuth(HttpBearer):
    def authenticate(self, request, token):
        found = authenticate(token)
        if found is None or found.kind != ApiToken.OPERATOR:
            return None
        request.api_token = found
        return found


def require_seat(request, handle: str | None = None) -> Seat:
    """The seat this request acts as; a seat token may act only as itself (403 otherwise)."""
    token: ApiToken = request.auth
    own = token.own_seat
    if own is not None:
        if handle is not None and own.handle != handle:
            raise Forbidden(f"this token belongs to seat {own.handle!r} and cannot act as {handle!r}")
        return own
    if handle is None:
        raise Forbidden("an operator token must name the seat it reads")
    seat = Seat.objects.select_related("role", "unit", "company").filter(handle=handle, company=token.company).first()
    if seat is None:
        from crewlet.errors import NotFound

        raise NotFound(f"no seat with handle {handle!r}")
    return seat


def acting_seat(request, handle: str) -> Seat:
    """The seat a turn runs as: only its own seat token may start its turn, call its tools or post it."""
    if request.auth.kind != ApiToken.SEAT:
        raise Forbidden("an operator token cannot run a seat's turn; use the seat's own token")
    return require_seat(request, handle)


seat_auth = SeatAuth()
seat_only_auth = SeatAuth(related=("seat",))  # a route that reads the seat row alone: POST /turns
operator_auth = OperatorAuth()
