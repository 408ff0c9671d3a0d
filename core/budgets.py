"""Token budgets: counters per seat and per company in the current window.

``has_room`` answers True, False or None (the counter could not be read: unknown is not no).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import TYPE_CHECKING

from django.db import DatabaseError, connection
from django.utils import timezone

if TYPE_CHECKING:
    from crewlet.models import Seat

log = logging.getLogger("core.budgets")


def window_start(window: str, now: datetime | None = None) -> datetime:
    now = now or timezone.now()
    start = now.replace(hour=0, minute=0, second=0, microsecond=0)
    return start.replace(day=1) if window == "month" else start


def _ceilings(seat: Seat):
    seat_ceiling = seat.token_budget or (seat.role.token_budget if seat.role_id and seat.role else None)
    return seat_ceiling, seat.company.token_budget


def spent(scope: str, scope_id: int, window: str) -> int:
    from core.models import BudgetCounter

    row = BudgetCounter.objects.filter(scope=scope, scope_id=scope_id, window_start=window_start(window)).first()
    return row.tokens if row else 0


def has_room(seat: Seat) -> bool | None:
    """Whether the seat and its company are both under their ceilings in this window."""
    seat_ceiling, company_ceiling = _ceilings(seat)
    window = seat.company.budget_window
    try:
        if seat_ceiling and spent("seat", seat.pk, window) >= seat_ceiling:
            return False
        if company_ceiling and spent("company", seat.company_id, window) >= company_ceiling:
            return False
    except DatabaseError:
        log.warning("budget counter unreadable for seat %s", seat.handle, exc_info=True)
        return None
    return True


# Both counters in ONE statement, existing or not: an upsert (the window's first charge creates the
# row, a later one adds to it; two charges racing for a new row meet in the unique index, never in
# a second row). PostgreSQL locks the rows in the order of the VALUES (the seat's, then the
# company's), the order the per-scope UPDATEs took them: two charges of one seat and company queue on
# the seat's row instead of each holding one row the other waits for.
_CHARGE_SQL = (
    'INSERT INTO "{table}" (scope, scope_id, window_start, tokens) VALUES (%s, %s, %s, %s), (%s, %s, %s, %s)'
    ' ON CONFLICT (scope, scope_id, window_start) DO UPDATE SET tokens = "{table}".tokens + excluded.tokens'
)


def charge(seat: Seat, tokens: int) -> None:
    """Add ``tokens`` to the seat's and the company's counters in the current window (one statement)."""
    from core.models import BudgetCounter

    start = connection.ops.adapt_datetimefield_value(window_start(seat.company.budget_window))
    with connection.cursor() as cursor:
        cursor.execute(_CHARGE_SQL.format(table=BudgetCounter._meta.db_table),
                       ["seat", seat.pk, start, tokens, "company", seat.company_id, start, tokens])
