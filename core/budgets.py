"""Token budgets: counters per seat and per company in the current window.

``has_room`` answers True, False or None (the counter could not be read: unknown is not no).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import TYPE_CHECKING

from django.db import DatabaseError, connection, transaction
from django.db.models import F
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
    from crewlet.models import BudgetCounter

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


# Both counters in ONE statement, each row locked in the order the two per-scope UPDATEs took them
# (the seat's, then the company's): two charges of one seat and company queue on the seat's row
# instead of each holding one row the other waits for. SQLite's write lock is the database's, so it
# needs no order. The scopes that come back were charged; a missing one is the window's first charge.
_CHARGE_SQL = {
    "postgresql": (
        'UPDATE "{table}" SET tokens = "{table}".tokens + %s FROM (SELECT id FROM "{table}" WHERE window_start = %s'
        " AND ((scope = 'seat' AND scope_id = %s) OR (scope = 'company' AND scope_id = %s))"
        ' ORDER BY scope DESC FOR UPDATE) AS locked WHERE "{table}".id = locked.id RETURNING "{table}".scope'
    ),
    "sqlite": (
        'UPDATE "{table}" SET tokens = tokens + %s WHERE window_start = %s'
        " AND ((scope = 'seat' AND scope_id = %s) OR (scope = 'company' AND scope_id = %s)) RETURNING scope"
    ),
}


def charge(seat: Seat, tokens: int) -> None:
    """Add ``tokens`` to the seat's and the company's counters in the current window."""
    from crewlet.models import BudgetCounter

    start = window_start(seat.company.budget_window)
    scopes = (("seat", seat.pk), ("company", seat.company_id))
    charged = _charge_existing(BudgetCounter, start, scopes, tokens)
    for scope, scope_id in scopes:
        if scope in charged:
            continue
        with transaction.atomic():  # the window's first charge: the row is created (or raced and updated)
            _row, created = BudgetCounter.objects.get_or_create(
                scope=scope, scope_id=scope_id, window_start=start, defaults={"tokens": tokens}
            )
            if not created:
                BudgetCounter.objects.filter(pk=_row.pk).update(tokens=F("tokens") + tokens)


def _charge_existing(model, start: datetime, scopes, tokens: int) -> set[str]:
    """One UPDATE of the window's existing counters of ``scopes``; the scopes it charged."""
    (_, seat_id), (_, company_id) = scopes
    with connection.cursor() as cursor:
        cursor.execute(_CHARGE_SQL[connection.vendor].format(table=model._meta.db_table),
                       [tokens, connection.ops.adapt_datetimefield_value(start), seat_id, company_id])
        return {row[0] for row in cursor.fetchall()}
