"""``statements.Compiled``: a queryset compiled once, run again with other values, answers what the
ORM answers for those values; a builder that hides a value from the statement is refused.
``statements.Insert`` and ``statements.Update`` write what ``bulk_create`` and ``update`` write."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.utils import timezone

from core.models import Event
from core.statements import Compiled, Insert, Update, in_model_order
from crewlet.models import Seat
from learning import diary, skills
from learning.models import CounterpartyProfile, DiaryEntry, Episode, SynthesizedSkill

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


def _skills_at_version(seat_id: int, version: int):
    return SynthesizedSkill.objects.filter(seat_id=seat_id, version=version).order_by("id").values_list("name")


def test_a_positive_integer_value_is_bound_as_the_backend_binds_it(seat, other_seat):
    # PostgreSQL binds a positive integer field's value wrapped (psycopg's Int4): the probe is still found
    for who in (seat, other_seat):
        SynthesizedSkill.objects.create(seat=who, name=f"deploy-{who.pk}", description="d", body="1. step", version=3,
                                        created_at=timezone.now())
    read = Compiled(_skills_at_version, -1, 2_000_000_001)
    assert read.rows(seat.pk, 3) == [(f"deploy-{seat.pk}",)] == list(_skills_at_version(seat.pk, 3))
    assert read.rows(other_seat.pk, 2) == []


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


EVENT_COLUMNS = ("name", "seat_id", "turn_id", "trace_id", "payload")
PAYLOADS = [{"nested": {"list": [1, 2.5, None, True]}, "text": "naïve \"quoted\" {braces} \\ back"}, {}, {"n": 0}]


def _events(seat, tag: str) -> list[Event]:
    return [Event(name=f"probe_{tag}", seat=seat if i % 2 else None, turn_id=f"run-{i}", trace_id=f"trace-{i}", payload=p)
            for i, p in enumerate(PAYLOADS)]


def test_an_insert_writes_the_rows_bulk_create_writes_and_gives_each_its_id(seat):
    before = timezone.now()
    written = Insert(Event).write(_events(seat, "x"))
    Event.objects.bulk_create(_events(seat, "y"))

    def stored(name):
        return list(Event.objects.filter(name=name).order_by("id").values_list(*EVENT_COLUMNS[1:]))

    assert stored("probe_x") == stored("probe_y") and len(stored("probe_x")) == len(PAYLOADS)
    assert [e.pk for e in written] == list(Event.objects.filter(name="probe_x").order_by("id").values_list("id", flat=True))
    assert all(not e._state.adding and e.created_at >= before for e in written)  # auto_now_add stamped, as the ORM does
    assert Event.objects.get(pk=written[0].pk).payload == PAYLOADS[0]


def test_an_inserted_vector_row_reads_back_as_the_orm_wrote_it(seat):
    now = timezone.now()
    fields = dict(seat=seat, run_id="r-1", ask="deploy", tool_sequence=["git_push"], started_at=now, ended_at=now)
    mine, theirs = Episode(**fields), Episode(**{**fields, "run_id": "r-2"})
    for episode in (mine, theirs):
        episode.set_vector([0.25, -0.5, 1.0], "probe-model")
    Insert(Episode).write([mine])
    theirs.save(force_insert=True)
    columns = [f.attname for f in Episode._meta.concrete_fields if f.name not in ("id", "run_id")]
    assert list(Episode.objects.filter(pk=mine.pk).values_list(*columns)) == list(
        Episode.objects.filter(pk=theirs.pk).values_list(*columns))
    assert Episode.objects.get(pk=mine.pk).embedding == [0.25, -0.5, 1.0]


def test_an_insert_past_the_engine_s_parameter_limit_writes_every_row(seat):
    rows = [Event(name="probe_many", seat=seat, payload={"i": i}) for i in range(400)]  # 2,000 parameters
    Insert(Event).write(rows)
    assert sorted(e.pk for e in rows) == list(Event.objects.filter(name="probe_many").order_by("id").values_list("id", flat=True))
    assert len({e.pk for e in rows}) == 400


def test_an_insert_refuses_a_row_saved_already(seat):
    saved = Event.objects.create(name="probe_saved", payload={})
    with pytest.raises(ValueError, match="saved already"):
        Insert(Event).write([saved])


def _profile(seat, handle: str) -> CounterpartyProfile:
    return CounterpartyProfile.objects.create(observer=seat, subject_handle=handle, subject_platform="slack", observations=2)


def test_an_update_changes_the_rows_the_orm_update_changes_and_counts_them(seat, other_seat):
    merge = Update(CounterpartyProfile, ("topics", "communication_style", "observations"), ("id", "observations"))
    mine, theirs, untouched = _profile(seat, "maya"), _profile(other_seat, "maya"), _profile(seat, "ravi")
    values = (["deploys", "naïve \"quotes\""], "terse", 3)

    assert merge.run((mine.pk, 2), values) == 1
    assert CounterpartyProfile.objects.filter(pk=theirs.pk, observations=2).update(
        topics=values[0], communication_style=values[1], observations=values[2]) == 1
    assert merge.run((mine.pk, 2), (["stale"], "stale", 9)) == 0  # the row moved: nothing written

    def row(pk):
        return CounterpartyProfile.objects.filter(pk=pk).values_list("topics", "communication_style", "observations").get()

    assert row(mine.pk) == row(theirs.pk) == (values[0], "terse", 3)
    assert row(untouched.pk) == ([], "", 2)


def test_an_update_keyed_by_a_relation_matches_the_related_row(seat, other_seat):
    by_seat = Update(CounterpartyProfile, ("communication_style",), ("observer", "subject_handle"))
    _profile(seat, "maya"), _profile(other_seat, "maya")
    assert by_seat.run((seat.pk, "maya"), ("warm",)) == 1
    assert dict(CounterpartyProfile.objects.values_list("observer_id", "communication_style")) == {seat.pk: "warm", other_seat.pk: ""}
    with pytest.raises(ValueError, match="NULL"):
        by_seat.run((None, "maya"), ("warm",))


def test_a_bound_read_runs_when_iterated_and_gives_its_statement_to_a_batch(seat):
    diary.write(seat=seat, content="the billing export runs nightly", kind=DiaryEntry.LONG)
    bound = Compiled(_live_notes, -1, PROBE_TIME).bound(seat.pk, timezone.now())
    sql, params = bound.statement()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        raw = cursor.fetchall()
    assert bound.converted(raw) == list(bound) == list(_live_notes(seat.pk, timezone.now()))
