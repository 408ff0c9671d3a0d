"""The dispatcher's gates, in the spec's order, each recorded by name per worker per turn."""

from unittest import mock

from core import events
from crewlet.config import schema
from learning.events import ReflectionCompleted
from learning.models import DiaryEntry, Episode, Turn
from learning.reflection import dispatcher, reflect_turn, registry
from learning.reflection.ring import RING, RunRing

WORKERS = ["persist_decider", "episodist", "profiler", "skill_use", "synthesizer", "refiner"]


def latest(seat):
    return events.rows(ReflectionCompleted, seat=seat).first().payload


def test_every_wired_worker_reports_and_the_record_is_the_seats_latest_reflection(seat, make_turn):
    turn = make_turn()
    reflect_turn(turn.pk)
    payload = latest(seat)
    assert payload["gate"] is None and payload["run_id"] == turn.run_id and payload["turn"] == turn.pk
    assert payload["order"] == [*WORKERS, "skill_reflection"] and set(payload["workers"]) == set(payload["order"])
    assert payload["workers"]["persist_decider"]["status"] == "ran"
    assert payload["workers"]["synthesizer"] == {"status": "skipped", "gate": "too_few_tools"}


def test_no_workers_gate_when_learning_is_off_company_wide(seat, make_turn, serve_config):
    serve_config(learning=schema.Learning(enabled=False))
    reflect_turn(make_turn().pk)
    payload = latest(seat)
    assert payload["gate"] == "no_workers" and payload["workers"] == {}
    assert not Episode.objects.exists()


def test_no_role_gate_for_a_seat_this_revision_no_longer_has_a_role_for(seat, make_turn):
    turn = make_turn()
    seat.role = None
    seat.save()
    reflect_turn(turn.pk)
    payload = latest(seat)
    assert payload["gate"] == "no_role"
    assert {w: r["gate"] for w, r in payload["workers"].items()} == dict.fromkeys(WORKERS, "no_role")


def test_role_opt_out_closes_and_unset_inherits_the_company(seat, make_turn):
    seat.role.learning_enabled = False
    seat.role.save()
    reflect_turn(make_turn().pk)
    assert latest(seat)["gate"] == "role_opted_out"

    seat.role.learning_enabled = None
    seat.role.save()
    seat.company.learning_enabled = False
    seat.company.save()
    reflect_turn(make_turn().pk)
    assert latest(seat)["gate"] == "role_opted_out"

    seat.company.learning_enabled = True
    seat.company.save()
    reflect_turn(make_turn().pk)
    assert latest(seat)["gate"] is None


def test_no_budget_skips_before_the_ring_and_leaves_the_turn_reflectable(seat, make_turn):
    turn = make_turn()
    with mock.patch("core.budgets.has_room", return_value=False):
        assert reflect_turn(turn.pk)["gate"] == "no_budget"
    turn.refresh_from_db()
    assert turn.reflected_at is None and (turn.seat_id, turn.run_id) not in RING._ids
    assert not DiaryEntry.objects.exists()
    assert reflect_turn(turn.pk)["gate"] is None  # the ceiling moved: the same turn reflects
    turn.refresh_from_db()
    assert turn.reflected_at is not None


def test_an_unreachable_budget_counter_reflects_anyway(seat, make_turn):
    with mock.patch("core.budgets.has_room", return_value=None):
        assert reflect_turn(make_turn().pk)["gate"] is None


def test_a_real_budget_ceiling_closes_the_no_budget_gate(seat, make_turn):
    from core import budgets

    seat.token_budget = 10
    seat.save()
    budgets.charge(seat, 10)
    assert reflect_turn(make_turn().pk)["gate"] == "no_budget"


def test_duplicate_gate_is_the_run_id_ring(seat, make_turn, ctx_of):
    turn = make_turn()
    first = dispatcher.run_pass(ctx_of(turn))
    second = dispatcher.run_pass(ctx_of(turn))
    assert first.gate is None and second.gate == "duplicate"
    assert Episode.objects.count() == 1 and DiaryEntry.objects.count() == 1


def test_the_ring_is_bounded_and_evicts_the_oldest():
    ring = RunRing(size=3)
    for run in ("a", "b", "c", "d"):
        assert ring.seen(run) is False
    assert len(ring) == 3
    assert ring.seen("a") is False  # evicted, so taken again
    assert ring.seen("d") is True


def test_no_engagement_for_skipped_and_for_done_with_no_tool(seat, make_turn):
    reflect_turn(make_turn(review_outcome="skipped").pk)
    assert latest(seat)["gate"] == "no_engagement"
    reflect_turn(make_turn(tool_sequence=[], tools_called=[]).pk)
    assert latest(seat)["gate"] == "no_engagement"
    assert not Episode.objects.exists()


def test_a_reply_is_engagement_even_with_no_tool_call(seat, make_turn):
    turn = make_turn(tool_sequence=[], tools_called=[], replied=True)
    assert reflect_turn(turn.pk)["gate"] is None
    assert Episode.objects.get().run_id == turn.run_id
    reflect_turn(make_turn(review_outcome="skipped", replied=True).pk)
    assert latest(seat)["gate"] == "no_engagement"  # a skipped turn processed nothing, whatever it says


def test_a_failed_turn_with_no_tool_is_still_engaged(seat, make_turn):
    turn = make_turn(review_outcome="failed", failure_set_by="budget", tool_sequence=[], tools_called=[])
    assert reflect_turn(turn.pk)["gate"] is None


def test_tools_called_in_earlier_rounds_count_as_engagement(seat, make_turn):
    turn = make_turn(tool_sequence=[], tools_called=["jira_search"])
    assert reflect_turn(turn.pk)["gate"] is None


def test_a_failing_worker_is_reported_by_name_and_the_others_still_run(seat, make_turn):
    from learning.reflection.workers import profiler

    with mock.patch.object(profiler.Profiler, "run", side_effect=RuntimeError("profile store down")):
        result = reflect_turn(make_turn().pk)
    assert result["status"] == "reflected" and result["failed"] == ["profiler"]
    payload = latest(seat)
    assert payload["failed"] == ["profiler"]
    assert payload["workers"]["profiler"] == {"status": "failed", "error": "RuntimeError: profile store down"}
    assert payload["workers"]["episodist"]["status"] == "ran" and payload["workers"]["persist_decider"]["status"] == "ran"
    assert Episode.objects.count() == 1 and DiaryEntry.objects.count() == 1


def test_a_worker_whose_applicability_raises_is_isolated_too(seat, make_turn):
    from learning.reflection.workers import profiler

    with mock.patch.object(profiler.Profiler, "applies", side_effect=ValueError("bad")):
        reflect_turn(make_turn().pk)
    assert latest(seat)["workers"]["profiler"]["status"] == "failed"
    assert DiaryEntry.objects.count() == 1 and Episode.objects.count() == 1


def test_an_unparseable_answer_is_answered_offline_and_said_so(seat, make_turn, scripted):
    scripted.queue("persist_decision", "I think you should remember this.")
    reflect_turn(make_turn().pk)
    payload = latest(seat)
    persisted = payload["workers"]["persist_decider"]
    assert persisted["status"] == "ran" and persisted["result"]["answered_by"] == "offline"
    assert "unparseable" in persisted["result"]["fallback"]
    assert DiaryEntry.objects.exists()  # the offline decision was stored: the lesson is not lost
    assert payload["workers"]["episodist"]["status"] == "ran"


def test_the_task_returns_quietly_for_a_gone_or_already_reflected_turn(seat, make_turn):
    from learning.reflection.tasks import reflect_turn as task

    turn = make_turn()
    assert task(turn.pk)["status"] == "reflected"
    assert task(turn.pk)["status"] == "already_reflected"
    assert task(999999)["status"] == "gone"
    assert events.rows(ReflectionCompleted, seat=seat).first() is not None
    assert Turn.objects.get(pk=turn.pk).reflected_at is not None


def test_registry_walks_the_workers_in_the_specs_order():
    assert [w.name for w in registry.WORKERS] == WORKERS


def test_refiner_is_unbuilt_when_refinement_is_off_or_both_auto_flags_are(seat, make_turn, serve_config):
    serve_config(learning=schema.Learning(skill_refinement=schema.SkillRefinement(enabled=False)))
    assert "refiner" not in [w.name for w in registry.wired_workers()]
    serve_config(
        learning=schema.Learning(
            skill_refinement=schema.SkillRefinement(auto_refine_on_success=False, auto_refine_on_failure=False)
        )
    )
    assert "refiner" not in [w.name for w in registry.wired_workers()]
    reflect_turn(make_turn().pk)
    assert "refiner" not in latest(seat)["workers"]


def test_the_task_completes_even_when_the_lock_cannot_be_had(seat, make_turn):
    from learning.reflection import lock

    turn = make_turn()
    with mock.patch("learning.reflection.service.seat_lock", side_effect=lock.LockTimeout("busy")):
        assert reflect_turn(turn.pk)["status"] == "lock_timeout"
    assert Turn.objects.get(pk=turn.pk).reflected_at is None  # left for reflect_backlog


def test_the_task_completes_when_the_pass_itself_cannot_start(seat, make_turn):
    turn = make_turn()
    with mock.patch.object(dispatcher, "reflect", side_effect=RuntimeError("database went away")):
        result = reflect_turn(turn.pk)
    assert result["status"] == "error" and "database went away" in result["error"]
    assert Turn.objects.get(pk=turn.pk).reflected_at is None


def test_a_failed_skill_reflection_signal_write_skips_no_worker(seat, make_turn):
    from django.db import OperationalError

    from learning.reflection.workers import skill_reflector

    with mock.patch.object(skill_reflector, "accumulate", side_effect=OperationalError("database is locked")):
        result = reflect_turn(make_turn().pk)
    payload = latest(seat)
    assert result["status"] == "reflected" and payload["gate"] is None and payload["failed"] == []
    assert payload["workers"]["episodist"]["status"] == "ran" and payload["workers"]["persist_decider"]["status"] == "ran"
    assert Episode.objects.count() == 1 and DiaryEntry.objects.count() == 1
