from dataclasses import replace
from datetime import timedelta

import pytest

from core.models import Event
from crewlet.config import schema
from learning.memory import skills
from learning.models import SynthesizedSkill
from learning.passes import curator

pytestmark = pytest.mark.django_db


def skill(seat, name, *, state=SynthesizedSkill.ACTIVE, unused_days=None, age_days=200, now, pinned=False):
    return SynthesizedSkill.objects.create(
        seat=seat, name=name, description=name, body="1. do it", state=state, pinned=pinned,
        created_at=now - timedelta(days=age_days),
        last_used_at=None if unused_days is None else now - timedelta(days=unused_days),
    )


def state_of(s):
    return SynthesizedSkill.objects.get(pk=s.pk).state


def test_an_active_skill_unused_past_stale_after_days_goes_stale(seat, now):
    old, fresh = skill(seat, "old", unused_days=31, now=now), skill(seat, "fresh", unused_days=29, now=now)
    report = curator.run_curator(now=now)
    assert report["staled"] == 1 and state_of(old) == "stale" and state_of(fresh) == "active"
    event = Event.objects.get(name="skill_staled")
    assert event.payload["skill_id"] == old.pk and event.payload["unused_days"] == 31


def test_a_skill_never_used_counts_from_its_creation(seat, now):
    new, aged = skill(seat, "new", age_days=5, now=now), skill(seat, "aged", age_days=45, now=now)
    curator.run_curator(now=now)
    assert state_of(new) == "active" and state_of(aged) == "stale"


def test_a_stale_skill_unused_past_archive_after_days_is_archived(seat, now):
    gone = skill(seat, "gone", state="stale", unused_days=91, now=now)
    kept = skill(seat, "kept", state="stale", unused_days=60, now=now)
    report = curator.run_curator(now=now)
    assert report["archived"] == 1 and state_of(gone) == "archived" and state_of(kept) == "stale"
    assert Event.objects.get(name="skill_archived").payload["skill_id"] == gone.pk
    assert gone.pk not in set(skills.catalogue(seat).values_list("id", flat=True))


def test_an_active_skill_is_listed_stale_for_a_tick_before_it_is_archived(seat, now):
    s = skill(seat, "ancient", unused_days=120, now=now)
    curator.run_curator(now=now)
    assert state_of(s) == "stale"
    curator.run_curator(now=now + timedelta(days=1))
    assert state_of(s) == "archived"


def test_pinned_skills_are_exempt_from_every_automatic_transition(seat, now):
    active = skill(seat, "pinned-active", unused_days=400, now=now, pinned=True)
    stale = skill(seat, "pinned-stale", state="stale", unused_days=400, now=now, pinned=True)
    report = curator.run_curator(now=now)
    assert (report["staled"], report["archived"]) == (0, 0)
    assert state_of(active) == "active" and state_of(stale) == "stale"


def test_a_stale_skill_used_again_is_active_at_once_and_the_curator_leaves_it(seat, now):
    s = skill(seat, "revived", state="stale", unused_days=80, now=now)
    skills.mark_used([s.pk], seat=seat, now=now)
    assert state_of(s) == "active" and Event.objects.filter(name="skill_revived").count() == 1
    curator.run_curator(now=now)
    assert state_of(s) == "active"


def test_an_archive_window_inside_the_stale_window_is_widened_to_it(seat, serve_config, now):
    serve_config(learning=replace(schema.Learning(), skill_curator=replace(
        schema.SkillCurator(), stale_after_days=30, archive_after_days=10)))
    fresh_stale = skill(seat, "twenty", state="stale", unused_days=20, now=now)
    old_stale = skill(seat, "thirtyone", state="stale", unused_days=31, now=now)
    report = curator.run_curator(now=now)
    assert report["results"][0]["archive_window_widened"] is True
    assert state_of(fresh_stale) == "stale" and state_of(old_stale) == "archived"


def test_a_dry_run_counts_transitions_and_makes_none(seat, now):
    s = skill(seat, "old", unused_days=31, now=now)
    report = curator.run_curator(now=now, dry_run=True)
    assert report["staled"] == 1 and state_of(s) == "active" and not Event.objects.exists()
