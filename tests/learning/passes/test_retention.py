from datetime import timedelta

import pytest

from learning.models import DiaryEntry, PrefetchSnapshot, RefreshLedger
from learning.passes import retention
from tests.learning.passes.conftest import note

pytestmark = pytest.mark.django_db


def aged_run_state(seat, now):
    old_snap = PrefetchSnapshot.objects.create(run_id="old", seat=seat, rendered={})
    new_snap = PrefetchSnapshot.objects.create(run_id="new", seat=seat, rendered={})
    PrefetchSnapshot.objects.filter(pk=old_snap.pk).update(created_at=now - timedelta(days=2))
    old_led = RefreshLedger.objects.create(run_id="old", seat=seat)
    RefreshLedger.objects.create(run_id="new", seat=seat)
    RefreshLedger.objects.filter(pk=old_led.pk).update(updated_at=now - timedelta(days=2))
    return old_snap, new_snap


def test_the_sweep_deletes_expired_short_notes_and_day_old_run_state(seat, now):
    expired = note(seat, "freeze", kind=DiaryEntry.SHORT, ttl_until=now - timedelta(minutes=1))
    live = note(seat, "still frozen", kind=DiaryEntry.SHORT, ttl_until=now + timedelta(days=1))
    forever = note(seat, "a lasting rule")
    aged_run_state(seat, now)
    report = retention.run_retention(now=now)
    assert report == {"dry_run": False, "diary_short_deleted": 1, "prefetch_snapshots_deleted": 1,
                      "refresh_ledgers_deleted": 1}
    assert set(DiaryEntry.objects.values_list("id", flat=True)) == {live.pk, forever.pk} and expired.pk
    assert list(PrefetchSnapshot.objects.values_list("run_id", flat=True)) == ["new"]
    assert list(RefreshLedger.objects.values_list("run_id", flat=True)) == ["new"]


def test_a_dry_run_counts_the_same_deletes_and_keeps_every_row(seat, now):
    note(seat, "freeze", kind=DiaryEntry.SHORT, ttl_until=now - timedelta(minutes=1))
    aged_run_state(seat, now)
    report = retention.run_retention(now=now, dry_run=True)
    assert report["diary_short_deleted"] == 1 and report["prefetch_snapshots_deleted"] == 1
    assert DiaryEntry.objects.count() == 1 and PrefetchSnapshot.objects.count() == 2
