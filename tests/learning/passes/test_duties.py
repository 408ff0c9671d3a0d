from datetime import timedelta
from unittest import mock

import pytest
from django.db import DatabaseError

from learning.models import Duty
from learning.passes import duties

pytestmark = pytest.mark.django_db


def test_a_free_duty_is_claimed_under_this_incarnation_and_released_with_its_result(now):
    held = duties.claim("learning.lifecycle", now=now)
    row = Duty.objects.get(name="learning.lifecycle")
    assert held is not None and row.holder == duties.holder_id() and row.lease_until > now
    assert row.holder.count(":") == 2 and row.holder.endswith(duties.INCARNATION)
    assert duties.release(held, result={"seats": 3})
    row.refresh_from_db()
    assert (row.holder, row.lease_until, row.last_result) == ("", None, {"seats": 3}) and row.last_finished_at


def test_a_held_duty_is_not_claimed_again_until_its_lease_runs_out(now):
    Duty.objects.create(name="learning.curator", holder="peer:1:abc", lease_until=now + timedelta(minutes=5))
    assert duties.claim("learning.curator", now=now) is None
    assert duties.claim("learning.curator", now=now + timedelta(minutes=6)) is not None


def test_a_claim_that_cannot_be_confirmed_fails_closed(now):
    with mock.patch.object(Duty.objects, "filter", side_effect=DatabaseError("connection lost")):
        assert duties.claim("learning.lifecycle", now=now) is None


def test_a_claim_read_back_under_another_holder_fails_closed(now):
    class Lost:
        def exists(self):
            return False

    original = Duty.objects.filter

    def filter_(*args, **kwargs):
        if "holder" in kwargs:  # the read-back: a peer's id is there instead of ours
            return Lost()
        return original(*args, **kwargs)

    with mock.patch.object(Duty.objects, "filter", side_effect=filter_):
        assert duties.claim("learning.lifecycle", now=now) is None


def test_run_singleton_does_not_run_a_pass_whose_duty_is_held():
    Duty.objects.create(name="learning.retention", holder="peer:1:abc", lease_until=duties.timezone.now() + timedelta(minutes=5))
    ran = []
    result = duties.run_singleton("learning.retention", lambda: ran.append(1) or {})
    assert result["ran"] is False and ran == []


def test_a_failing_pass_still_releases_its_duty():
    with pytest.raises(RuntimeError):
        duties.run_singleton("learning.retention", lambda: (_ for _ in ()).throw(RuntimeError("boom")))
    row = Duty.objects.get(name="learning.retention")
    assert row.holder == "" and "boom" in row.last_result["error"]
