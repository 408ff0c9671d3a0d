"""``statements.Compiled``: a queryset compiled once, run again with other values, answers what the
ORM answers for those values; a builder that hides a value from the statement is refused."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from core.statements import Compiled, in_model_order
from crewlet.models import Seat
from learning import diary, skills
from learning.models import DiaryEntry, SynthesizedSkill

PROBE_TIME = datetime(2000, 1, 1, tzinfo=UTC)


def _live_notes(seat_id: int, now: datetime):
    return diary.live(Seat(pk=seat_id), now).order_by("-created_at", "id").values_list("id", "content", "created_at")


def test_a_compiled_read_answers_what_the_orm_answers_for_each_call_values(seat, other_seat):
    now = timezone.now()
    diary.write(seat=seat, content="the billing export runs nightly", kind=DiaryEntry.LONG)
    diary.write(seat=seat, content="standup moved to 10:00", kind=DiaryEntry.SHORT, ttl_days=1, now=now - timedelta(days=3))
    diary.write(seat=other_seat, content="other seat's note", kind=DiaryEntry.LONG)
    read = Compiled(_live_notes, -1, PROBE_TIME)

    for who, when in ((seat, now), (other_seat, now), (seat, now - timedelta(days=3))):
        assert read.rows(who.pk, when) == list(_live_notes(who.pk, when))
    assert [content for _id, content, _at in read.rows(seat.pk, now)] == ["the billing export runs nightly"]
    (_id, _content, created_at), = read.rows(other_seat.pk, now)
    assert isinstance(created_at, datetime) and created_at.tzinfo is not None  # the field's converters ran


def test_a_builder_whose_value_never_reaches_the_statement_is_refused(seat):
    read = Compiled(lambda seat_id, name: skills.catalogue(Seat(pk=seat_id)).values_list("id"), -1, "\0name")

    with pytest.raises(ValueError, match="exactly once"):
        read.rows(seat.pk, "deploy")


def test_columns_are_put_in_the_order_from_db_reads_them(seat):
    skills.create(seat=seat, name="deploy", description="ship the service", body="1. step", trigger="inline")
    columns = in_model_order(SynthesizedSkill, ("state", "name", "id"))
    (row,) = Compiled(lambda seat_id: skills.catalogue(Seat(pk=seat_id)).values_list(*columns), -1).rows(seat.pk)

    skill = SynthesizedSkill.from_db("default", columns, row)
    assert (skill.name, skill.state) == ("deploy", SynthesizedSkill.ACTIVE)
    with pytest.raises(ValueError, match="not columns"):
        in_model_order(SynthesizedSkill, ("name", "no_such_column"))
