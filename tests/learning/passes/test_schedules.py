from dataclasses import replace
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone
from django_q.models import Schedule

from crewlet import config
from crewlet.config import schema
from learning.models import Duty
from learning.passes import schedules, ticks
from tests.conftest import test_config as config_with

pytestmark = pytest.mark.django_db


def test_install_declares_every_loop_once_and_none_is_due_at_install():
    before = timezone.now()
    assert set(schedules.install(cfg=config.current()).values()) == {"created"}
    rows = {s.name: s for s in Schedule.objects.all()}
    assert set(rows) == {f"learning.{n}" for n in ("lifecycle", "curator", "clustering", "embed_fill", "retention",
                                                   "event_retention", "promotion", "reflect_sweep")}
    assert all(s.next_run > before for s in rows.values())  # nothing fires because something started
    assert rows["learning.lifecycle"].minutes == 60 and rows["learning.curator"].minutes == 24 * 60
    assert rows["learning.embed_fill"].minutes == 1 and rows["learning.embed_fill"].func == "learning.passes.ticks.embed_fill"


def test_install_is_idempotent():
    schedules.install(cfg=config.current())
    clock = dict(Schedule.objects.values_list("name", "next_run"))
    assert set(schedules.install(cfg=config.current()).values()) == {"unchanged"}
    assert dict(Schedule.objects.values_list("name", "next_run")) == clock and Schedule.objects.count() == len(schedules.LOOPS)


def test_an_apply_restarts_only_the_clock_whose_cadence_changed():
    schedules.install(cfg=config.current(), now=timezone.now() - timedelta(hours=5))
    clock = dict(Schedule.objects.values_list("name", "next_run"))
    curator = replace(schema.SkillCurator(), interval_hours=12)
    config.use(config_with(learning=replace(schema.Learning(), skill_curator=curator, summarize_episodes=True)))
    after = dict(Schedule.objects.values_list("name", "next_run"))
    assert abs(after["learning.curator"] - (timezone.now() + timedelta(hours=12))) < timedelta(minutes=1)
    assert Schedule.objects.get(name="learning.curator").minutes == 12 * 60
    assert {k: v for k, v in after.items() if k != "learning.curator"} == {
        k: v for k, v in clock.items() if k != "learning.curator"
    }


def test_an_apply_that_leaves_cadences_alone_leaves_every_clock():
    schedules.install(cfg=config.current())
    clock = dict(Schedule.objects.values_list("name", "next_run"))
    config.use(config_with(learning=replace(schema.Learning(), summarize_episodes=True)))
    assert dict(Schedule.objects.values_list("name", "next_run")) == clock


def test_a_pass_that_is_off_claims_no_duty_and_one_a_revision_turns_on_runs_at_its_next_tick(seat, monkeypatch):
    ran = []
    monkeypatch.setattr(schedules, "service", lambda name: lambda **kw: ran.append(name) or {"drafted": 0})
    assert ticks.clustering()["ran"] is False  # scheduler_enabled is off by default
    assert not Duty.objects.filter(name="learning.clustering").exists() and ran == []
    synthesis = replace(schema.SkillSynthesis(), scheduler_enabled=True)
    config.use(config_with(learning=replace(schema.Learning(), skill_synthesis=synthesis)))
    assert ticks.clustering()["ran"] is True and ran == ["clustering"]


def test_every_loop_names_a_pass_this_build_has():
    assert all(callable(schedules.service(name)) for name in schedules.LOOPS)


def test_a_tick_runs_the_pass_under_its_duty_and_records_the_result(seat):
    result = ticks.retention()
    assert result["ran"] is True and "diary_short_deleted" in result
    duty = Duty.objects.get(name="learning.retention")
    assert duty.holder == "" and duty.last_result["diary_short_deleted"] == 0


def test_install_schedules_command_ends_with_what_it_changed():
    from io import StringIO

    out = StringIO()
    call_command("install_schedules", stdout=out)
    assert f"changed: {len(schedules.LOOPS)} created, 0 updated" in out.getvalue()
    out = StringIO()
    call_command("install_schedules", stdout=out)
    assert "changed: 0 created, 0 updated" in out.getvalue() and "off (its ticks claim nothing)" in out.getvalue()
