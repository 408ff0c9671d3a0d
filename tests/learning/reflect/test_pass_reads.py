"""A pass's reads fetched together: the same rows as reading each, one round trip on PostgreSQL,
a bounded number of statements per engaged turn, and a failed batch costing round trips only."""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from unittest import mock

import pytest
from django.db import DatabaseError, connection
from django.test.utils import CaptureQueriesContext

from core import events
from core.event_types import ReflectionCompleted
from core.statements import Compiled
from learning import tools
from learning.models import CounterpartyProfile, DiaryEntry, Episode, Turn
from learning.reflect import pass_reads
from learning.reflect.service import reflect_turn

pytestmark = pytest.mark.django_db(transaction=True)

# An engaged turn (a human's stated preference, answered in the thread), its own task: at most this
# many round trips (COMMIT not counted; SQLite's BEGIN IMMEDIATE is a statement, PostgreSQL's BEGIN is
# not): the turn's row, the lock, the queue, the pass's reads (one round trip on PostgreSQL, five
# statements on SQLite), then one transaction of writes: exactly what it sends today (the bound was 16 / 22
# until the pass's writes became fixed statements). bench/reflect_throughput.py prints the average over a
# realistic mix of turns.
ENGAGED_TURN_ROUND_TRIPS = {"postgresql": 12, "sqlite": 18}


@contextmanager
def round_trips():
    """The statements this thread sends, those of one psycopg pipeline counted as one round trip."""
    seen = {"statements": 0, "round_trips": 0, "pipelines": 0}
    piped = {"open": False, "sent": False}

    def wrapper(execute, sql, params, many, context):
        seen["statements"] += 1
        if not piped["open"] or not piped["sent"]:
            seen["round_trips"] += 1
        piped["sent"] = piped["open"]
        return execute(sql, params, many, context)

    patches = []
    if connection.vendor == "postgresql":
        import psycopg

        real = psycopg.Connection.pipeline

        @contextmanager
        def pipeline(self):
            seen["pipelines"] += 1
            piped.update(open=True, sent=False)
            try:
                with real(self) as p:
                    yield p
            finally:
                piped["open"] = False

        patches.append(mock.patch.object(psycopg.Connection, "pipeline", pipeline))
    with connection.execute_wrapper(wrapper), ExitStack() as stack:
        for patch in patches:
            stack.enter_context(patch)
        yield seen


def _querysets(seat, turns: list[Turn]) -> dict:
    first, second = turns[0], turns[1]
    mine = Turn.objects.filter(seat=seat)
    return {
        "models": mine.order_by("id"),
        "tuples": mine.order_by("-id").values_list("id", "received_at", "payload"),
        "flat": mine.order_by("id").values_list("run_id", flat=True)[:2],
        "union": mine.filter(pk=first.pk).values_list("id", "run_id").union(
            mine.filter(run_id=second.run_id).values_list("id", "run_id"), all=True),
        "none": mine.filter(id__in=[]),
        "empty": mine.filter(run_id="no-such-run").values_list("id", flat=True),
        "compiled": Compiled(lambda seat_id, run_id: Turn.objects.filter(seat_id=seat_id).exclude(run_id=run_id)
                             .order_by("id").values_list("id", "received_at"), -1, "\0run-id").bound(seat.pk, first.run_id),
    }


def _comparable(rows: list) -> list:
    return [(r.pk, r.run_id, r.payload, r.received_at, r.seat_id) if isinstance(r, Turn) else r for r in rows]


def test_fetched_together_the_rows_are_those_each_queryset_gives(seat, make_turn):
    turns = [make_turn(), make_turn(), make_turn()]
    expected = {name: _comparable(list(qs)) for name, qs in _querysets(seat, turns).items()}
    fetched = pass_reads.fetch_together(_querysets(seat, turns))
    assert {name: _comparable(rows) for name, rows in fetched.items()} == expected
    assert sorted(expected["union"]) == sorted([(turns[0].pk, turns[0].run_id), (turns[1].pk, turns[1].run_id)])
    assert expected["none"] == [] and len(expected["models"]) == 3


def test_the_reads_travel_in_one_round_trip_on_postgresql_and_one_a_read_on_sqlite(seat, make_turn):
    turns = [make_turn(), make_turn()]
    querysets = _querysets(seat, turns)
    with round_trips() as seen:
        pass_reads.fetch_together(querysets)
    sent = len(querysets) - 1  # ``id__in=[]`` matches nothing by construction: not sent at all
    assert seen["statements"] == sent
    assert seen["round_trips"] == (1 if connection.vendor == "postgresql" else sent)


def test_a_queryset_of_another_shape_is_refused_before_anything_is_sent(seat, make_turn):
    make_turn()
    with CaptureQueriesContext(connection) as captured, pytest.raises(TypeError):
        pass_reads.fetch_together({"dicts": Turn.objects.values("id"), "rows": Turn.objects.all()})
    assert captured.captured_queries == []


def test_an_engaged_turn_runs_a_bounded_number_of_statements(seat, make_turn):
    make_turn()  # the seat's first pass creates its counters and state rows; the bound is for the steady state
    reflect_turn(Turn.objects.get().pk)
    turn = make_turn()
    with round_trips() as seen:
        assert reflect_turn(turn.pk)["status"] == "reflected"
    payload = events.rows(ReflectionCompleted, seat=seat).first().payload
    assert {n for n, w in payload["workers"].items() if w["status"] == "ran"} >= {"persist_decider", "episodist", "profiler"}
    assert seen["round_trips"] <= ENGAGED_TURN_ROUND_TRIPS[connection.vendor]


def _written(seat) -> dict:
    payload = events.rows(ReflectionCompleted, seat=seat).first().payload
    return {
        "workers": {name: worker["status"] for name, worker in payload["workers"].items()},
        "episodes": Episode.objects.filter(seat=seat).count(),
        "notes": DiaryEntry.objects.filter(seat=seat).count(),
        "observations": sorted(CounterpartyProfile.objects.filter(observer=seat).values_list("observations", flat=True)),
    }


def test_a_failed_batched_read_is_read_again_where_needed_and_the_pass_writes_the_same(seat, other_seat, make_turn):
    for target in (seat, other_seat):
        make_turn(target)
        reflect_turn(Turn.objects.filter(seat=target).get().pk)  # a profile to merge into, an episode to replace
    again = Turn.objects.get(seat=seat).payload
    assert reflect_turn(make_turn(work_key=again["work_key"]).pk)["status"] == "reflected"
    with mock.patch.object(pass_reads, "fetch_together", side_effect=DatabaseError("connection reset")):
        other = Turn.objects.get(seat=other_seat).payload
        assert reflect_turn(make_turn(other_seat, work_key=other["work_key"]).pk)["status"] == "reflected"
    assert _written(other_seat) == _written(seat)
    assert _written(seat)["observations"] == [2] and _written(seat)["episodes"] == 1  # merged, and replaced


def test_the_builtin_called_under_the_run_id_closes_the_decider_through_the_batched_read(seat, make_turn):
    turn = make_turn()
    tools.run(seat=seat, name="reflect_and_persist", run_id=turn.run_id,
              arguments={"content": "Maya wants bullet-point updates.", "kind": "long"})
    assert reflect_turn(turn.pk)["status"] == "reflected"
    payload = events.rows(ReflectionCompleted, seat=seat).first().payload
    assert payload["workers"]["persist_decider"] == {"status": "skipped", "gate": "self_persisted"}
    assert DiaryEntry.objects.filter(seat=seat).count() == 1  # the builtin's note, not a second one
