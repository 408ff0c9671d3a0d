"""A turn start's writes are ONE commit: the frozen prefix, the spend, the skill stamp, the notes' use
stamp and every event (summary, skill_used, skill_revived, knowledge_read, auxiliary_spend)."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connections
from django.test.utils import CaptureQueriesContext

from core import budgets
from core.models import Event
from knowledge.pages import save_page
from learning.models import DiaryEntry, PrefetchSnapshot, SynthesizedSkill
from tests.learning.memory.rows import episode, note, skill

from .conftest import block

WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")


@pytest.fixture
def commits(transactional_db, monkeypatch):
    """Counts commits on the default connection: an atomic block's own, and each write run in autocommit."""
    connection = connections["default"]
    counted = {"n": 0}
    commit = connection.commit

    def counting_commit():
        counted["n"] += 1
        return commit()

    def autocommitted_writes(execute, sql, params, many, context):
        if not connection.in_atomic_block and sql.lstrip().upper().startswith(WRITES):
            counted["n"] += 1
        return execute(sql, params, many, context)

    monkeypatch.setattr(connection, "commit", counting_commit)
    with connection.execute_wrapper(autocommitted_writes):
        yield counted


@pytest.fixture
def rich_seat(seat, role, serve_native):
    role.tools = ["reflect_and_persist", "refine_skill", "query_episodes"]  # guidance: several skill_used events
    role.save()
    for i in range(4):
        note(seat, f"The billing export runs nightly at 0{i}:00")
    episode(seat, ask="fix the billing export", did="restarted the export job", tools=["jira_get"], run_id="old-1")
    skill(seat, "restart-export", "restart the nightly billing export")
    skill(seat, "ageing", "an old procedure", state=SynthesizedSkill.STALE)
    save_page(container_key="ENG", title="Billing export runbook", body="restart steps for the billing export")
    serve_native(scope=["ENG"])
    return seat


def test_a_rich_turn_start_commits_its_prefix_and_all_its_other_writes_at_once(rich_seat, run, commits):
    seat = rich_seat
    with CaptureQueriesContext(connections["default"]) as queries:
        result = run(run_id="turn-1", ask="the billing export failed again; can you restart it?")

    assert commits["n"] == 1
    assert result["frozen"] is False and PrefetchSnapshot.objects.filter(seat=seat, run_id="turn-1").exists()
    names = list(Event.objects.filter(turn_id="turn-1").values_list("name", flat=True))
    assert names.count("prefetch_summary") == 1
    assert names.count("skill_used") == len(result["guidance_keys"]) >= 2
    assert names.count("skill_revived") == 1 and names.count("auxiliary_spend") >= 1
    assert names.count("knowledge_read") == 1
    stamped = SynthesizedSkill.objects.filter(seat=seat)
    assert all(s.last_used_at is not None and s.state == SynthesizedSkill.ACTIVE for s in stamped)
    assert DiaryEntry.objects.filter(seat=seat, use_count=1).exists()  # the notes the filter picked
    sql = [q["sql"] for q in queries.captured_queries]
    # the catalogue is read once, the stamp is one UPDATE, the events are one INSERT
    assert sum(1 for s in sql if s.startswith("SELECT") and "synthesized_skills" in s.split(" WHERE ")[0]) == 1
    assert sum(1 for s in sql if s.startswith("UPDATE") and "synthesized_skills" in s) == 1
    event_inserts = [s for s in sql if s.startswith("INSERT") and "core_event" in s]
    assert len(event_inserts) <= 1 + names.count("auxiliary_spend")  # the spend's own insert is the charge's


def test_a_frozen_repeat_commits_nothing(rich_seat, run, commits):
    run(run_id="turn-2", ask="the billing export failed again")
    before = commits["n"]
    assert run(run_id="turn-2", ask="the billing export failed again")["frozen"] is True
    assert commits["n"] == before


def _counted(seat) -> int:
    return budgets.spent("seat", seat.pk, seat.company.budget_window)


def test_a_rich_turn_start_makes_one_charge_for_all_its_calls(rich_seat, run, commits):
    budgets.charge(rich_seat, 1)  # the window's counters exist (a window's first charge creates them)
    before = commits["n"]
    with CaptureQueriesContext(connections["default"]) as queries:
        result = run(run_id="turn-1", ask="the billing export failed again; can you restart it?")

    sql = [q["sql"] for q in queries.captured_queries]
    writes = [s.split(" SET ")[0].split(" (")[0] for s in sql if s.startswith(WRITES)]
    assert sorted(writes) == sorted([
        'INSERT INTO "learning_prefetchsnapshot"',
        'INSERT INTO "core_budgetcounter"',  # the seat's and the company's counters: one charge, one statement
        'UPDATE "synthesized_skills"',
        'UPDATE "agent_diary"',
        'INSERT INTO "core_event"',  # the spend's events with the others
    ])
    # the reads (about a dozen; a search is two, by meaning and by words) and these five writes
    assert len([s for s in sql if "SAVEPOINT" not in s.upper()]) <= 22
    calls = Event.objects.filter(turn_id="turn-1", name="auxiliary_spend")
    assert calls.count() == 2  # the memory filter and the knowledge query, each recorded
    charged = sum(e.payload["input_tokens"] + e.payload["output_tokens"] for e in calls)
    assert _counted(rich_seat) == 1 + charged
    assert result["frozen"] is False and commits["n"] == before + 1


def test_a_write_that_fails_is_rolled_back_alone_and_the_others_commit(rich_seat, run):
    budgets.charge(rich_seat, 1)
    connection = connections["default"]

    def notes_unwritable(execute, sql, params, many, context):
        if sql.startswith('UPDATE "agent_diary"'):
            raise DatabaseError("agent_diary is locked")
        return execute(sql, params, many, context)

    with connection.execute_wrapper(notes_unwritable):
        result = run(run_id="turn-1", ask="the billing export failed again; can you restart it?")

    assert result["frozen"] is False and PrefetchSnapshot.objects.filter(seat=rich_seat, run_id="turn-1").exists()
    assert block(result, "personal_memory")["hit"]
    assert not DiaryEntry.objects.filter(seat=rich_seat, use_count__gt=0).exists()  # only its own write is lost
    names = list(Event.objects.filter(turn_id="turn-1").values_list("name", flat=True))
    assert names.count("prefetch_summary") == 1 and names.count("auxiliary_spend") == 2
    assert names.count("skill_revived") == 1  # announced once, not once a try
    assert _counted(rich_seat) > 1  # the spend is charged all the same
    assert all(s.last_used_at is not None for s in SynthesizedSkill.objects.filter(seat=rich_seat))


def test_events_that_cannot_be_written_cost_neither_the_prefix_nor_the_stamps(rich_seat, run):
    connection = connections["default"]

    def events_unwritable(execute, sql, params, many, context):
        if sql.startswith('INSERT INTO "core_event"'):
            raise DatabaseError("core_event is locked")
        return execute(sql, params, many, context)

    with connection.execute_wrapper(events_unwritable):
        result = run(run_id="turn-1", ask="the billing export failed again; can you restart it?")

    assert result["frozen"] is False
    assert not Event.objects.filter(turn_id="turn-1").exists()
    assert PrefetchSnapshot.objects.filter(seat=rich_seat, run_id="turn-1").count() == 1
    assert DiaryEntry.objects.filter(seat=rich_seat, use_count=1).exists()
    assert all(s.last_used_at is not None for s in SynthesizedSkill.objects.filter(seat=rich_seat))


def test_a_start_that_loses_the_race_for_its_run_id_still_charges_its_calls(rich_seat, run, monkeypatch):
    from learning.prefetch import assemble

    budgets.charge(rich_seat, 1)
    blocks = assemble.run_blocks

    def a_concurrent_start_freezes_first(ctx, meanwhile=None):
        results = blocks(ctx, meanwhile)  # this start's calls are made ...
        PrefetchSnapshot.objects.create(seat=rich_seat, run_id="turn-1", rendered={"run_id": "turn-1", "blocks": []})
        return results  # ... and another start of the same run froze meanwhile

    monkeypatch.setattr(assemble, "run_blocks", a_concurrent_start_freezes_first)
    result = run(run_id="turn-1", ask="the billing export failed again; can you restart it?")

    assert result["frozen"] is True and result["blocks"] == []  # the winner's prefix is the turn's
    calls = Event.objects.filter(turn_id="turn-1", name="auxiliary_spend")
    assert calls.count() == 2
    charged = sum(e.payload["input_tokens"] + e.payload["output_tokens"] for e in calls)
    assert charged > 0 and _counted(rich_seat) == 1 + charged
