"""The event catalogue: one class per published event, each app's own, fields checked on write."""

import pytest
from pydantic import ValidationError

from core import event_types, events
from core.models import Event
from learning.events import EpisodeWritten, ReflectionCompleted, SkillUsed, WorkerFailed

pytestmark = pytest.mark.django_db


def test_every_class_names_its_event_once_and_forbids_undeclared_fields():
    assert len({cls.NAME for cls in event_types.catalogue()}) == len(event_types.catalogue())
    with pytest.raises(ValidationError, match="skil_id"):
        SkillUsed(skil_id=1, name="deploy", version=1)


def test_each_app_registers_the_events_it_publishes():
    """Core lists the apps' events without importing them: each app's events module registers its classes."""
    owners = {cls.NAME: cls.__module__ for cls in event_types.catalogue()}

    assert owners["auxiliary_spend"] == "core.event_types"
    assert owners["reflection_completed"] == "learning.events"
    assert owners["knowledge_read"] == "knowledge.events"
    assert owners["shard_judged"] == "learning.transcripts.events"


def test_a_second_class_with_a_taken_name_is_refused():
    with pytest.raises(TypeError, match="two events are named 'skill_used'"):
        class Impostor(event_types.EventPayload):
            NAME = "skill_used"
            RETENTION = "turn_telemetry"


def test_publish_takes_only_a_catalogued_event(seat):
    with pytest.raises(TypeError, match="core.event_types"):
        events.publish("skill_used", seat=seat)


def test_an_event_reads_back_as_its_class_with_where_and_when(seat):
    events.publish(ReflectionCompleted(run_id="r-1", workers={"profiler": WorkerFailed(error="boom")}), seat=seat, turn_id="r-1")

    found = events.latest(ReflectionCompleted, seat=seat)

    assert isinstance(found.event.workers["profiler"], WorkerFailed) and found.event.workers["profiler"].error == "boom"
    assert found.turn_id == "r-1" and found.seat_id == seat.pk
    assert Event.objects.get().payload["workers"] == {"profiler": {"status": "failed", "error": "boom"}}


def test_a_row_no_shape_can_read_is_skipped_not_raised(seat, caplog):
    Event.objects.create(name="episode_written", seat=seat, payload={"label": "no episode id"})

    assert events.latest(EpisodeWritten, seat=seat) is None
    assert "could not be read" in caplog.text
