"""A run's frozen turn-start prefix, as every reader reads it: the turn start's repeat for the same run id,
the stored turn's omitted fields, ``refresh_memory``'s senders. The turn start writes it before it answers
(``learning.prefetch.assemble``).
"""

from __future__ import annotations

from learning.models import PrefetchSnapshot


def stored(*, seat_id: int, run_id: str) -> dict | None:
    """The seat's frozen prefix for this run id (run ids are unique per seat), or None."""
    return (PrefetchSnapshot.objects.filter(seat_id=seat_id, run_id=run_id)
            .order_by("id").values_list("rendered", flat=True).first())
