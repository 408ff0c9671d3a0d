"""The retention sweep: one horizon a table, a range delete each.

Expired ``diary_short`` notes (already excluded by every read's own predicate) are deleted
through ``diary.sweep_expired``; frozen prefetch snapshots and refresh ledgers are kept a day
(a run id is not repeated past that). Episodes have no plain retention sweep: theirs is the
lifecycle pass.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from learning.memory import diary
from learning.models import PrefetchSnapshot, RefreshLedger

RUN_STATE_RETENTION = timedelta(days=1)


def run_retention(*, now: datetime | None = None, dry_run: bool = False) -> dict:
    """Delete what is past its horizon; a dry run counts the same deletes and rolls them back."""
    now = now or timezone.now()
    cutoff = now - RUN_STATE_RETENTION
    with transaction.atomic():
        counts = {
            "diary_short_deleted": diary.sweep_expired(now=now),
            "prefetch_snapshots_deleted": PrefetchSnapshot.objects.filter(created_at__lt=cutoff).delete()[0],
            "refresh_ledgers_deleted": RefreshLedger.objects.filter(updated_at__lt=cutoff).delete()[0],
        }
        if dry_run:
            transaction.set_rollback(True)
    return {"dry_run": dry_run, **counts}
