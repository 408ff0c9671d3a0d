"""A run's frozen turn-start prefix, as every reader reads it: the turn start's repeat for the same run id,
the stored turn's omitted fields, ``refresh_memory``'s senders.

Served over HTTP, the prefix is written once the turn start's response is sent
(``learning.prefetch.assemble``, under ``key``): a reader in the same process has that write made first
(``core.after_response.settled``), so a runtime's next call never reads around its own turn start.
"""

from __future__ import annotations

from core import after_response
from core.statements import Compiled
from learning.models import PrefetchSnapshot


def key(seat_id: int, run_id: str) -> tuple:
    """What the turn start's writes after its response are queued under."""
    return ("frozen_prefix", seat_id, run_id)


# every turn start reads it first: compiled once (core.statements)
_FROZEN = Compiled(lambda seat_id, run_id: PrefetchSnapshot.objects.filter(seat_id=seat_id, run_id=run_id)
                   .order_by("id").values_list("rendered", flat=True)[:1], -1, "\0run-id")


def stored(*, seat_id: int, run_id: str) -> dict | None:
    """The seat's frozen prefix for this run id (run ids are unique per seat), or None."""
    after_response.settled(key(seat_id, run_id))
    rows = _FROZEN.rows(seat_id, run_id)
    return rows[0][0] if rows else None
