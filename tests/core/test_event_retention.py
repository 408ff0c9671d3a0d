"""Event retention: one family and horizon per catalogued event; spend rolled up, never lost."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from pydantic import BaseModel, ConfigDict

from core import auxiliary, event_retention, events, purposes, spend
from core.event_types import RETENTIONS, AdminAction, EventPayload, catalogue
from core.models import BudgetCounter, Event, SpendDay
from learning.events import EpisodeLifecyclePass, PrefetchSummary, SkillSynthesized
from learning.passes import ticks

pytestmark = pytest.mark.django_db


class Asked(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ask: str = ""


ECHO = purposes.register(
    purposes.Purpose(
        name="test_retention_echo",
        inputs=Asked,
        render=lambda inputs: purposes.system_user("Answer in one word.", inputs.ask),
        parse=lambda text: text.strip(),
        offline=lambda inputs: "offline-answer",
        max_tokens=16,
    )
)


def spent(seat, n, *, days_ago: float, stage="turn"):
    """``n`` real auxiliary calls (charged, one ``auxiliary_spend`` each), dated ``days_ago``."""
    before = set(Event.objects.filter(name="auxiliary_spend").values_list("id", flat=True))
    for i in range(n):
        auxiliary.call(seat=seat, stage=stage, purpose=ECHO.name, turn_id=f"t-{days_ago}-{i}", inputs={"ask": f"colour {i}?"})
    new = Event.objects.filter(name="auxiliary_spend").exclude(id__in=before)
    assert new.count() == n
    new.update(created_at=timezone.now() - timedelta(days=days_ago))


def age(event_row, days: float):
    Event.objects.filter(pk=event_row.pk).update(created_at=timezone.now() - timedelta(days=days))


def names():
    return sorted(Event.objects.values_list("name", flat=True))


def test_every_catalogued_event_is_in_one_family_with_its_horizon():
    horizons = {f.name: (f.horizon.days if f.horizon else None) for f in event_retention.FAMILIES}
    assert horizons == {"auxiliary_spend": 35, "turn_telemetry": 91, "turn_record": 365, "skills": 365,
                        "pass_reports": 30, "audit": None}
    assert set(horizons) == set(RETENTIONS)
    # every installed app's events are catalogued, each in exactly one family
    listed = [name for family in event_retention.FAMILIES for name in family.names]
    assert sorted(listed) == sorted(cls.NAME for cls in catalogue())
    assert {"auxiliary_spend", "reflection_completed", "knowledge_read", "shard_judged"} <= set(listed)
    assert event_retention.family_of("prefetch_summary").name == "turn_telemetry"
    assert event_retention.family_of("reflection_completed").name == "turn_record"
    assert event_retention.family_of("admin_action").horizon is None
    # every event a person's action writes (not best effort) is kept or lives a year
    for cls in catalogue():
        if not cls.BEST_EFFORT:
            assert event_retention.family_of(cls.NAME).name in ("audit", "turn_record")


def test_an_event_class_without_a_family_is_refused():
    with pytest.raises(TypeError, match="no retention family"):
        class Unkept(EventPayload):
            NAME = "test_unkept"


def test_the_sweep_deletes_each_family_past_its_horizon_and_keeps_the_rest(seat):
    old_summary = events.publish(PrefetchSummary(summary="old"), seat=seat)
    new_summary = events.publish(PrefetchSummary(summary="new"), seat=seat)
    old_pass = events.publish(EpisodeLifecyclePass(seats=1, seats_due=0))
    old_skill = events.publish(SkillSynthesized(skill_id=1, name="x", trigger="clustered"), seat=seat)
    ancient_audit = events.publish(AdminAction(user="lena", action="publish_draft", object="knowledge.page:1"))
    age(old_summary, 92)
    age(new_summary, 89)
    age(old_pass, 31)
    age(old_skill, 300)
    age(ancient_audit, 5 * 365)

    report = event_retention.sweep()

    assert report["events_deleted"]["turn_telemetry"] == 1 and report["events_deleted"]["pass_reports"] == 1
    assert set(Event.objects.values_list("id", flat=True)) == {new_summary.pk, old_skill.pk, ancient_audit.pk}


def test_a_dry_run_counts_the_same_deletes_and_changes_nothing(seat):
    age(events.publish(PrefetchSummary(summary="old"), seat=seat), 100)
    spent(seat, 2, days_ago=40)
    before = names()
    report = event_retention.sweep(dry_run=True)
    assert report["events_deleted"] == {"auxiliary_spend": 2, "turn_telemetry": 1, "turn_record": 0, "skills": 0,
                                        "pass_reports": 0}
    assert names() == before and SpendDay.objects.count() == 0


def test_spend_is_rolled_up_before_it_is_deleted_and_the_totals_do_not_change(seat, other_seat):
    spent(seat, 3, days_ago=40)
    spent(other_seat, 2, days_ago=40, stage="background")
    spent(seat, 1, days_ago=50)
    spent(seat, 4, days_ago=2)
    counters = list(BudgetCounter.objects.order_by("id").values_list("scope", "scope_id", "window_start", "tokens"))
    before = spend.by_purpose()
    window = spend.by_purpose(since=timezone.localdate() - timedelta(days=45))
    assert spend.total(before).calls == 10 and spend.total(before).tokens > 0

    report = event_retention.sweep()

    assert report["events_deleted"]["auxiliary_spend"] == 6
    assert Event.objects.filter(name="auxiliary_spend").count() == 4
    assert spend.by_purpose() == before
    assert spend.by_purpose(since=timezone.localdate() - timedelta(days=45)) == window
    assert sum(SpendDay.objects.filter(seat=seat).values_list("calls", flat=True)) == 4
    assert spend.total(spend.by_purpose(seat=other_seat)).calls == 2
    # the budget counters are never swept
    assert list(BudgetCounter.objects.order_by("id").values_list("scope", "scope_id", "window_start", "tokens")) == counters
    assert event_retention.sweep()["events_deleted"]["auxiliary_spend"] == 0
    assert spend.by_purpose() == before


def test_a_day_swept_in_two_parts_adds_up_to_one_row(seat):
    noon = event_retention.day_start(timezone.localdate() - timedelta(days=40)) + timedelta(hours=12)
    horizon = event_retention.SPEND.horizon
    spent(seat, 2, days_ago=40)
    Event.objects.filter(name="auxiliary_spend").update(created_at=noon - timedelta(hours=2))
    first = event_retention.sweep(now=noon - timedelta(hours=1) + horizon)["events_deleted"]["auxiliary_spend"]
    spent(seat, 3, days_ago=40)
    Event.objects.filter(name="auxiliary_spend").update(created_at=noon)  # the same day, after the first cutoff
    second = event_retention.sweep(now=noon + timedelta(hours=1) + horizon)["events_deleted"]["auxiliary_spend"]
    assert (first, second) == (2, 3)
    (row,) = SpendDay.objects.all()
    assert (row.day, row.calls, row.purpose, row.stage, row.seat) == (noon.date(), 5, ECHO.name, "turn", seat)


def test_the_health_page_shows_the_same_auxiliary_spend_before_and_after_a_sweep(client, lead, seat):
    spent(seat, 3, days_ago=40)
    spent(seat, 2, days_ago=1)
    client.force_login(lead)

    def spend_table():
        html = client.get(reverse("learning_pages:health"), {"window": "90"}).content.decode()
        assert "Auxiliary spend" in html
        return re.search(r'<tr id="spend-total">.*?</tr>', html, re.S).group(0)

    shown = spend_table()
    assert '<td class="num">5</td>' in shown
    event_retention.sweep()
    assert Event.objects.filter(name="auxiliary_spend").count() == 2
    assert spend_table() == shown


def test_the_sweep_is_a_scheduled_pass():
    from learning.models import Duty
    from learning.passes import schedules

    assert schedules.LOOPS["event_retention"].service == "core.event_retention.sweep"
    result = ticks.event_retention()
    assert result["ran"] is True and "events_deleted" in result
    assert Duty.objects.get(name="learning.event_retention").last_result["events_deleted"]["auxiliary_spend"] == 0
