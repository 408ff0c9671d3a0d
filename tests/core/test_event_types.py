"""The event catalogue: one class per published event, fields checked on write, old rows read back."""

import pytest
from pydantic import ValidationError

from core import event_types, events
from core.event_types import (
    AdminAction,
    EpisodeWritten,
    KnowledgeRead,
    ReflectionCompleted,
    SkillUsed,
    WorkerFailed,
)
from core.models import Event

pytestmark = pytest.mark.django_db


def test_every_class_names_its_event_once_and_forbids_undeclared_fields():
    assert len({cls.NAME for cls in event_types.CATALOGUE}) == len(event_types.CATALOGUE)
    with pytest.raises(ValidationError, match="skil_id"):
        SkillUsed(skil_id=1, name="deploy", version=1)


def test_publish_takes_only_a_catalogued_event(seat):
    with pytest.raises(TypeError, match="core.event_types"):
        events.publish("skill_used", seat=seat)


def test_an_event_reads_back_as_its_class_with_where_and_when(seat):
    events.publish(ReflectionCompleted(run_id="r-1", workers={"profiler": WorkerFailed(error="boom")}), seat=seat, turn_id="r-1")

    found = events.latest(ReflectionCompleted, seat=seat)

    assert isinstance(found.event.workers["profiler"], WorkerFailed) and found.event.workers["profiler"].error == "boom"
    assert found.turn_id == "r-1" and found.seat_id == seat.pk
    assert Event.objects.get().payload["workers"] == {"profiler": {"status": "failed", "error": "boom"}}


def test_both_knowledge_read_shapes_of_old_rows_load_as_one_class(seat):
    Event.objects.create(name="knowledge_read", seat=seat, payload={
        "surface": "relevant_knowledge", "query": "q", "served_mode": "native",
        "pages": [{"page_id": "7", "container_key": "ENG", "title": "Runbook"}]})
    Event.objects.create(name="knowledge_read", seat=seat, payload={
        "via": "search_knowledge", "query": "q", "served_mode": "native", "unavailable": "",
        "pages": [{"page_id": 8, "title": "Deploy", "container_key": "ENG"}]})

    reads = [r.event for r in events.recorded(KnowledgeRead, seat=seat)]

    assert [(r.via, r.pages[0].page_id) for r in reads] == [("search_knowledge", "8"), ("relevant_knowledge", "7")]


def test_an_old_admin_action_keeps_its_extra_keys_as_detail():
    Event.objects.create(name="admin_action", payload={"user": "lena", "action": "pin", "object": "x:1", "skill_id": 1})

    found = events.latest(AdminAction)

    assert (found.event.user, found.event.detail) == ("lena", {"skill_id": 1})


def test_a_row_no_shape_can_read_is_skipped_not_raised(seat, caplog):
    Event.objects.create(name="episode_written", seat=seat, payload={"label": "no episode id"})

    assert events.latest(EpisodeWritten, seat=seat) is None
    assert "could not be read" in caplog.text
