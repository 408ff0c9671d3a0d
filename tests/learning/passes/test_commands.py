from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from learning.models import DiaryEntry, Duty, Episode
from tests.learning.passes.conftest import episode, note

pytestmark = pytest.mark.django_db


def run(*args):
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_run_pass_runs_the_pass_and_ends_with_what_it_changed(seat, now):
    note(seat, "freeze", kind=DiaryEntry.SHORT, ttl_until=now - timedelta(minutes=1))
    output = run("run_pass", "retention")
    assert "diary_short_deleted: 1" in output and output.strip().endswith("changed: diary_short_deleted=1")
    assert DiaryEntry.objects.count() == 0


def test_run_pass_dry_run_for_one_seat_says_what_it_would_change_and_changes_nothing(seat, other_seat, serve_config):
    from dataclasses import replace

    from crewlet.config import schema

    lifecycle = replace(schema.EpisodeLifecycle(), max_raw_episodes_per_agent=1)
    serve_config(learning=replace(schema.Learning(), episode_lifecycle=lifecycle))
    for who in (seat, other_seat):
        episode(who, age_days=20, outcome="self_iterate")
        episode(who, age_days=1)
    output = run("run_pass", "lifecycle", "--seat", "ana", "--dry-run")
    assert "would change: non_terminal_dropped=1" in output and "seats: 1" in output
    assert Episode.objects.count() == 4


def test_run_pass_refuses_a_seat_for_a_pass_that_walks_none():
    with pytest.raises(CommandError, match="does not take --seat"):
        run("run_pass", "retention", "--seat", "ana")


def test_run_pass_refuses_when_the_duty_is_held_elsewhere(seat):
    Duty.objects.create(name="learning.curator", holder="peer:1:x", lease_until=timezone.now() + timedelta(minutes=5))
    with pytest.raises(CommandError, match="held elsewhere"):
        run("run_pass", "curator")


def test_backfill_embeddings_fills_every_vectorless_row_and_says_so(seat):
    note(seat, "vectorless note")
    episode(seat)
    output = run("backfill_embeddings")
    assert "changed: 2 vector(s) filled, 0 held back" in output and "0 row(s) still without a vector" in output
    assert not DiaryEntry.objects.filter(embedding__isnull=True).exists()


def test_backfill_embeddings_with_a_model_reembeds_only_rows_of_that_model(seat):
    old, other = note(seat, "old model"), note(seat, "other model")
    old.set_vector([1.0] * 4, "retired-a")
    old.save()
    other.set_vector([1.0] * 4, "retired-b")
    other.save()
    output = run("backfill_embeddings", "--model", "retired-a")
    assert "changed: 1 vector(s) filled" in output
    assert DiaryEntry.objects.get(pk=other.pk).embedding_model == "retired-b"
