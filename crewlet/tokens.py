"""API tokens: authenticate one, list them, revoke or expire them. Only the hash is ever stored.

``authenticate`` is the one check every surface uses (the ninja API, the MCP server): a revoked
or expired token is refused, and a token in use has its ``last_used_at`` kept to the minute (a
write per request would put a lock on every turn start).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from django.db.models import QuerySet
from django.utils import timezone

from crewlet.errors import BadInput, Forbidden, NotFound
from crewlet.models import ApiToken, Seat, hash_token

LAST_USED_RESOLUTION = timedelta(minutes=1)
# what a turn start and the agent's tools read of the token's seat: its role, unit and company
SEAT_ROWS = ("seat", "seat__role", "seat__unit", "seat__company")


def authenticate(raw: str, related: Sequence[str] = SEAT_ROWS) -> ApiToken | None:
    """The live token with this raw value (not revoked, not expired), or None; marks it used.

    One SELECT on the token's unique sha256 hash loads the token with the rows ``related`` names (a
    route that reads less of the seat names less: each join costs the statement's compile); revocation
    and expiry are checked on the row. The last-used stamp is written at most once a minute.
    """
    token = next(iter(ApiToken.objects.select_related(*related).filter(
        token_hash=hash_token(raw))), None)  # the hash is unique: one row at most, no ORDER BY or LIMIT needed
    now = timezone.now()
    if token is None or token.revoked or (token.expires_at is not None and token.expires_at <= now):
        return None
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


def seat_for(raw: str, handle: str | None = None) -> Seat:
    """The active seat a seat token belongs to; ``handle`` (when given) must be that seat."""
    token = authenticate(raw) if raw else None
    if token is None:
        raise Forbidden("the token is unknown, revoked or expired")
    if token.kind != ApiToken.SEAT or token.seat is None:
        raise Forbidden("an operator token cannot run a seat's turn; use the seat's own token")
    if not token.seat.active:
        raise Forbidden(f"seat {token.seat.handle!r} is not active")
    if handle is not None and token.seat.handle != handle:
        raise Forbidden(f"this token belongs to seat {token.seat.handle!r} and cannot act as {handle!r}")
    return token.seat


def listing(*, seat: str | None = None, include_revoked: bool = False) -> QuerySet[ApiToken]:
    rows = ApiToken.objects.select_related("seat", "company").order_by("created_at", "id")
    if seat is not None:
        rows = rows.filter(seat__handle=seat)
    return rows if include_revoked else rows.filter(revoked=False)


def by_prefix(prefix: str) -> ApiToken:
    """The one token whose shown prefix starts with ``prefix`` (as ``tokens list`` prints it)."""
    rows = list(ApiToken.objects.filter(prefix__startswith=prefix)[:2]) if prefix else []
    if not rows:
        raise NotFound(f"no token with prefix {prefix!r}", field="prefix")
    if len(rows) > 1:
        raise BadInput(f"prefix {prefix!r} matches more than one token; give more of it", field="prefix")
    return rows[0]


def revoke(*, prefix: str) -> ApiToken:
    token = by_prefix(prefix)
    ApiToken.objects.filter(pk=token.pk).update(revoked=True)
    token.revoked = True
    return token


def expire(*, prefix: str, at: datetime) -> ApiToken:
    """Refuse the token from ``at`` on (now or later; a past moment means now)."""
    token = by_prefix(prefix)
    token.expires_at = max(at, timezone.now())
    ApiToken.objects.filter(pk=token.pk).update(expires_at=token.expires_at)
    return token


def state(token: ApiToken, now: datetime | None = None) -> str:
    now = now or timezone.now()
    if token.revoked:
        return "revoked"
    if token.expires_at is not None and token.expires_at <= now:
        return "expired"
    return "live"
