"""A reflection pass in two halves: model calls and embeds with no transaction open, then ONE
transaction (the workers' writes each in a savepoint, one charge, one bulk insert of events, the
turn's mark); the task drains the seat's waiting turns, earlier ones included, under one lock."""

from __future__ import annotations

import re
from contextlib import contextmanager
from unittest import mock

import pytest
from django.db import DatabaseError, IntegrityError, connection

from core import events
from core.event_types import AuxiliarySpend
from core.models import BudgetCounter
from core.providers.llm.offline import OfflineProvider
from learning.events import CounterpartyProfileUpdated, EpisodeWritten, ReflectionCompleted
from learning.models import CounterpartyProfile, DiaryEntry, Episode, Turn
from learning.reflection import dispatcher, service
from learning.reflection.service import reflect_turn
from learning.reflection.workers import episodist, profiler
from tests.learning.reflection.conftest import lose_its_task

pytestmark = pytest.mark.django_db(transaction=True)  # real commits, counted


@contextmanager
def counted():
    """Every statement this thread runs, and every commit of an atomic block."""
    seen: dict = {"sql": [], "commits": 0, "outside": [], "committed": [], "open": []}

    def wrapper(execute, sql, params, many, context):
        seen["sql"].append(sql)
        if sql.lstrip()[:6].upper() in ("INSERT", "UPDATE", "DELETE"):
            (seen["open"] if connection.in_atomic_block else seen["outside"]).append(sql)
        return execute(sql, params, many, context)

    real_commit = connection.commit

    def commit():
        seen["commits"] += 1
        seen["committed"].append(seen["open"])  # the writes each commit made durable
        seen["open"] = []
        return real_commit()

    with mock.patch.object(connection, "commit", commit), connection.execute_wrapper(wrapper):
        yield seen


def statements_on(seen: dict, table: str, verb: str) -> list[str]:
    """The statements of one verb naming ``table`` first (a UNION's parenthesised arms included)."""
    named = re.compile(rf'(?<![\w"])"?{table}"?(?![\w"])')
    return [s for s in seen["sql"] if s.lstrip("( ").upper().startswith(verb) and named.search(s[:80])]


def test_an_engaged_pass_commits_once_with_one_event_insert_and_one_charge(seat, make_turn):
    turn = make_turn()
    with counted() as seen:
        assert reflect_turn(turn.pk)["status"] == "reflected"
    # one commit holds every write of the pass (the seat's lock is an advisory lock: no write)
    assert len(seen["committed"]) == 1
    assert not seen["outside"]
    assert len(statements_on(seen, "core_event", "INSERT")) == 1
    # one charge: the seat's counter and the company's, one statement (an upsert)
    assert len(statements_on(seen, "core_budgetcounter", "INSERT")) == 1
    assert not statements_on(seen, "core_budgetcounter", "UPDATE")
    # no repeated reads: the counterparty's profile once, the episode to replace once, the turn's row
    # once before the lock and once under it (with the drain's queue and the seat's rows)
    assert len(statements_on(seen, "counterparty_profiles", "SELECT")) == 1
    assert len(statements_on(seen, "episodes", "SELECT")) == 1
    assert len([s for s in seen["sql"] if s.lstrip("( ").startswith("SELECT") and 'FROM "learning_turn"' in s]) == 2
    assert {r.event.NAME for r in events.recorded(EpisodeWritten, seat=seat)} == {"episode_written"}
    spends = list(events.recorded(AuxiliarySpend, seat=seat))
    assert {s.event.purpose for s in spends} >= {"persist_decision", "profile_update"}
    tokens = sum(s.event.input_tokens + s.event.output_tokens for s in spends)
    assert BudgetCounter.objects.get(scope="seat", scope_id=seat.pk).tokens == tokens > 0
    assert Episode.objects.filter(run_id=turn.run_id).count() == 1 and DiaryEntry.objects.count() == 1
    assert Turn.objects.get(pk=turn.pk).reflected_at is not None


def test_no_model_call_or_embed_runs_inside_the_write_transaction(seat, make_turn):
    turn = make_turn()
    calls: list[tuple[str, bool]] = []
    real_complete, real_embed_many, real_embed_one = OfflineProvider.complete, episodist.embed_many, None
    from learning.memory import diary

    real_embed_one = diary.embed_one

    def complete(self, *args, **kwargs):
        calls.append(("model", connection.in_atomic_block))
        return real_complete(self, *args, **kwargs)

    def embed_many(*args, **kwargs):
        calls.append(("embed", connection.in_atomic_block))
        return real_embed_many(*args, **kwargs)

    def embed_one(*args, **kwargs):
        calls.append(("embed", connection.in_atomic_block))
        return real_embed_one(*args, **kwargs)

    with mock.patch.object(OfflineProvider, "complete", complete), \
            mock.patch.object(episodist, "embed_many", embed_many), mock.patch.object(diary, "embed_one", embed_one):
        assert reflect_turn(turn.pk)["status"] == "reflected"
    assert [kind for kind, _ in calls].count("model") >= 2 and [kind for kind, _ in calls].count("embed") == 2
    assert not any(inside for _, inside in calls)


def test_a_failed_write_rolls_back_its_worker_alone_with_its_events(seat, make_turn):
    """The profiler's write hits a real constraint violation: its savepoint is rolled back (the
    transaction stays usable on PostgreSQL too), its event goes with it, its spend is still charged."""
    turn = make_turn()

    def colliding_write(ctx, sender, answer, existing):
        key = dict(observer=ctx.seat, subject_handle=sender.handle, subject_external_id="", subject_platform=sender.platform)
        CounterpartyProfile.objects.create(**key)
        CounterpartyProfile.objects.create(**key)  # the unique key: IntegrityError

    with mock.patch.object(profiler, "write", colliding_write):
        result = reflect_turn(turn.pk)
    assert result["status"] == "reflected" and result["failed"] == ["profiler"]
    payload = events.rows(ReflectionCompleted, seat=seat).first().payload
    assert "IntegrityError" in payload["workers"]["profiler"]["error"]
    assert payload["workers"]["episodist"]["status"] == "ran" and payload["workers"]["persist_decider"]["status"] == "ran"
    assert not CounterpartyProfile.objects.exists() and not events.rows(CounterpartyProfileUpdated).exists()
    assert Episode.objects.filter(run_id=turn.run_id).count() == 1 and events.rows(EpisodeWritten).count() == 1
    assert "profile_update" in {s.event.purpose for s in events.recorded(AuxiliarySpend, seat=seat)}


def test_a_pass_that_cannot_commit_still_charges_its_spend_and_the_turn_reflects_later(seat, make_turn):
    turn = make_turn()
    with mock.patch.object(dispatcher, "_publish", side_effect=DatabaseError("disk I/O error")):
        assert reflect_turn(turn.pk)["status"] == "error"
    assert Turn.objects.get(pk=turn.pk).reflected_at is None
    assert not Episode.objects.exists() and not DiaryEntry.objects.exists()
    spent = BudgetCounter.objects.get(scope="seat", scope_id=seat.pk).tokens
    assert spent > 0 and events.rows(AuxiliarySpend, seat=seat).count() >= 2
    again = reflect_turn(turn.pk)
    assert again["status"] == "reflected" and again["gate"] is None  # not a duplicate of the rolled-back pass
    assert Episode.objects.filter(run_id=turn.run_id).count() == 1
    assert BudgetCounter.objects.get(scope="seat", scope_id=seat.pk).tokens > spent  # both passes' calls charged


def _lost(make_turn, n: int, target=None) -> list[Turn]:
    """Stored turns whose tasks never ran (a worker killed with them)."""
    return [lose_its_task(make_turn, target) for _ in range(n)]


def test_the_task_drains_the_seats_waiting_turns_oldest_first_under_one_lock(seat, other_seat, make_turn):
    earlier = _lost(make_turn, 2)
    mine = make_turn()
    later = _lost(make_turn, 1)
    theirs = _lost(make_turn, 1, other_seat)
    locks = []
    real_lock = service.seat_lock

    @contextmanager
    def counting_lock(s, **kw):
        locks.append(s.pk)
        with real_lock(s, **kw):
            yield

    with mock.patch.object(service, "seat_lock", counting_lock):
        assert reflect_turn(mine.pk)["status"] == "reflected"
    assert locks == [seat.pk]
    order = [r.event.turn for r in events.recorded(ReflectionCompleted, seat=seat)][::-1]  # oldest first
    assert order == [t.pk for t in [*earlier, mine, *later]]
    assert Turn.objects.get(pk=theirs[0].pk).reflected_at is None  # another seat's turn waits for its own task


def test_a_lost_turns_redelivery_finds_it_reflected_after_one_row_read(seat, make_turn):
    lost = _lost(make_turn, 1)[0]
    assert reflect_turn(make_turn().pk)["status"] == "reflected"
    with counted() as seen:
        assert reflect_turn(lost.pk)["status"] == "already_reflected"
    assert len(seen["sql"]) == 1 and seen["commits"] == 0


def test_the_drain_stops_at_its_turn_limit_and_always_takes_its_own(seat, make_turn, monkeypatch):
    monkeypatch.setattr(service, "DRAIN_TURNS", 3)
    waiting = _lost(make_turn, 4)
    mine = make_turn()
    assert reflect_turn(mine.pk)["status"] == "reflected"
    reflected = set(Turn.objects.filter(reflected_at__isnull=False).values_list("id", flat=True))
    assert reflected == {waiting[0].pk, waiting[1].pk, mine.pk}


def test_the_drain_stops_when_the_seat_has_no_budget(seat, make_turn):
    waiting = _lost(make_turn, 2)
    mine = make_turn()
    with mock.patch("core.budgets.has_room", return_value=False):
        assert reflect_turn(mine.pk)["gate"] == "no_budget"
    assert events.rows(ReflectionCompleted, seat=seat).count() == 2  # the oldest, then its own; not the second
    assert not Turn.objects.filter(pk__in=[t.pk for t in [*waiting, mine]], reflected_at__isnull=False).exists()


def test_one_failing_turn_in_a_drain_costs_the_others_nothing(seat, make_turn):
    waiting = _lost(make_turn, 1)[0]
    mine = make_turn()
    real = dispatcher.reflect

    def failing_for_the_first(turn, **kw):
        if turn.pk == waiting.pk:
            raise IntegrityError("corrupt row")
        return real(turn, **kw)

    with mock.patch.object(dispatcher, "reflect", failing_for_the_first):
        assert reflect_turn(mine.pk)["status"] == "reflected"
    assert Turn.objects.get(pk=waiting.pk).reflected_at is None  # left for the backlog sweep


def _durability_setting() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        return str(cursor.fetchone()[0])


def test_a_drain_defers_each_pass_flush_to_one_durable_commit_and_restores_the_connection(seat, make_turn):
    """Each drained pass still commits alone (the next pass reads it); the flush to disk is deferred
    to one durable commit at the drain's end, and the connection is left as it was found."""
    _lost(make_turn, 2)
    mine = make_turn()
    before = _durability_setting()
    during = []
    real = dispatcher.reflect

    def recording(turn, **kw):
        during.append(_durability_setting())
        return real(turn, **kw)

    with counted() as seen, mock.patch.object(dispatcher, "reflect", recording):
        assert reflect_turn(mine.pk)["status"] == "reflected"
    assert during == ["off"] * 3 and _durability_setting() == before != "off"
    assert len(seen["committed"]) == 3  # one commit a pass
    durable = seen["outside"]
    assert len(durable) == 1 and durable[0].startswith('UPDATE "learning_turn"')  # the one durable commit
