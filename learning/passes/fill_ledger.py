"""The embedding fill's minute ledger: ONE budget a wall-clock minute, shared by every sender.

The fill is one singleton over the shared database, so the company's whole budget is its own
(``providers.embeddings.requests_per_minute`` and ``bytes_per_minute``, which a provider limits an
account by). The budget belongs to the minute, not to a run: the scheduled tick, ``run_pass
embed_fill`` and ``backfill_embeddings`` charge the same ``FillMinute`` row before each request, so
in one minute they together send at most one minute's requests and bytes. A charge is one
conditional UPDATE, so two senders racing for the last request cannot both have it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import F

from learning.models import FillMinute

KEPT = timedelta(hours=1)  # older minutes are deleted when a new one opens


def minute_of(now: datetime) -> datetime:
    return now.replace(second=0, microsecond=0)


def open_minute(now: datetime) -> datetime:
    """The start of ``now``'s minute, its ledger row there (made by the first sender of the minute)."""
    start = minute_of(now)
    if not FillMinute.objects.filter(minute=start).exists():
        try:
            with transaction.atomic():
                FillMinute.objects.create(minute=start)
        except IntegrityError:  # another sender opened it first: the row is what we wanted
            pass
        FillMinute.objects.filter(minute__lt=start - KEPT).delete()
    return start


def charge(start: datetime, size: int, *, max_requests: int, max_bytes: int) -> bool:
    """Take one request of ``size`` bytes from the minute; False when it would pass either bound."""
    with transaction.atomic():
        return bool(
            FillMinute.objects.filter(minute=start, requests__lt=max_requests, bytes__lte=max_bytes - size).update(
                requests=F("requests") + 1, bytes=F("bytes") + size
            )
        )


def spent(start: datetime) -> tuple[int, int]:
    """Requests and bytes the minute starting at ``start`` has sent, every sender together."""
    row = FillMinute.objects.filter(minute=start).values_list("requests", "bytes").first()
    return row or (0, 0)
