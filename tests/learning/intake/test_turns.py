"""POST /api/v1/turns: the turn_completed intake. Stored whole, idempotent by run id, one task per new turn."""

import pytest
from django.utils.dateparse import parse_datetime
from django_q.models import OrmQ

from learning.intake.turns import record_of
from learning.models import Turn
from tests.factories import operator_token, token_for
from tests.learning.memory.rows import skill
from tests.learning.reflection.conftest import record

URL = "/api/v1/turns"


@pytest.fixture
def sync_queue(monkeypatch):
    from django_q.conf import Conf

    monkeypatch.setattr(Conf, "SYNC", True)


def test_a_new_turn_is_stored_whole_and_answered_202_with_its_id(seat, seat_token, api_client):
    body = record(seat)
    response = api_client.post(URL, body, token=seat_token)
    assert response.status_code == 202
    turn = Turn.objects.get()
    assert response.json() == {"turn_id": turn.pk, "run_id": body["run_id"], "status": "accepted"}
    times = ("started_at", "ended_at")
    assert all(turn.payload[k] == v for k, v in body.items() if k not in times)
    assert turn.payload["replied"] is False  # a field the runtime left out is stored at its default
    assert all(parse_datetime(turn.payload[k]) == parse_datetime(body[k]) for k in times)
    assert turn.seat == seat and turn.reflected_at is None
    assert (turn.work_key, turn.conversation_kind, turn.review_outcome) == (body["work_key"], "chat", "done")


def test_one_task_is_enqueued_per_new_turn_and_a_repeat_is_not(seat, seat_token, api_client, django_capture_on_commit_callbacks):
    body = record(seat)
    with django_capture_on_commit_callbacks(execute=True):
        assert api_client.post(URL, body, token=seat_token).status_code == 202
    assert OrmQ.objects.count() == 1
    task = OrmQ.objects.get().task
    assert task["func"] == "learning.reflection.tasks.reflect_turn" and task["args"] == (Turn.objects.get().pk,)
    assert task["group"] == f"seat-{seat.pk}"
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        repeat = api_client.post(URL, body, token=seat_token)
    assert callbacks == []
    assert repeat.status_code == 200 and repeat.json()["status"] == "duplicate"
    assert repeat.json()["turn_id"] == Turn.objects.get().pk
    assert OrmQ.objects.count() == 1 and Turn.objects.count() == 1


def test_with_a_synchronous_queue_the_turn_is_reflected_by_the_time_it_is_answered(
    seat, seat_token, api_client, sync_queue, django_capture_on_commit_callbacks
):
    from core import events
    from learning.events import ReflectionCompleted

    with django_capture_on_commit_callbacks(execute=True):
        response = api_client.post(URL, record(seat), token=seat_token)
    assert response.status_code == 202
    assert Turn.objects.get().reflected_at is not None
    assert events.latest(ReflectionCompleted, seat=seat).event.turn == response.json()["turn_id"]


def test_schema_errors_are_422_naming_each_bad_field_and_nothing_is_stored(seat, seat_token, api_client):
    body = record(seat)
    body.update(review_outcome="finished", conversation_kind="carrier-pigeon", tool_sequence="jira_search", duration_ms=-5)
    del body["run_id"]
    body["interactions"][0]["sender"] = {"platform": "mattermost"}
    response = api_client.post(URL, body, token=seat_token)
    assert response.status_code == 422
    fields = {e["field"] for e in response.json()["errors"]}
    assert {"run_id", "review_outcome", "conversation_kind", "tool_sequence", "duration_ms", "interactions.0.sender"} <= fields
    for name in ("run_id", "review_outcome", "conversation_kind"):
        assert name in response.json()["detail"]
    assert not Turn.objects.exists() and not OrmQ.objects.exists()


def test_a_rolled_back_intake_enqueues_nothing(seat, seat_token, api_client, django_capture_on_commit_callbacks):
    from django.db import DatabaseError, connection

    def disk_full(execute, sql, params, many, context):
        if sql.startswith('INSERT INTO "learning_turn"'):
            raise DatabaseError("disk full")
        return execute(sql, params, many, context)

    with django_capture_on_commit_callbacks(execute=True) as callbacks, connection.execute_wrapper(disk_full):
        response = api_client.post(URL, record(seat), token=seat_token)
    assert callbacks == [] and not OrmQ.objects.exists()
    # answered as JSON with an id to find the logged traceback by, never the traceback itself
    assert response.status_code == 500 and response["Content-Type"].startswith("application/json")
    assert response.json()["detail"] == "internal error" and "disk full" not in response.text


def test_an_unknown_field_is_refused_rather_than_silently_dropped(seat, seat_token, api_client):
    body = record(seat)
    body["tool_sequnce"] = body.pop("tool_sequence")
    response = api_client.post(URL, body, token=seat_token)
    assert response.status_code == 422
    assert [e["field"] for e in response.json()["errors"]] == ["tool_sequnce"]


def test_failure_set_by_is_only_for_a_failed_turn(seat, seat_token, api_client):
    response = api_client.post(URL, record(seat, failure_set_by="reviewer"), token=seat_token)
    assert response.status_code == 422 and response.json()["errors"][0]["field"] == "failure_set_by"
    ok = api_client.post(URL, record(seat, review_outcome="failed", failure_set_by="guard"), token=seat_token)
    assert ok.status_code == 202


def test_tool_iterations_are_at_most_the_calls_the_record_lists(seat, seat_token, api_client):
    response = api_client.post(URL, record(seat, tools_called=["a", "b"], tool_iterations=3), token=seat_token)
    assert response.status_code == 422 and response.json()["errors"][0]["field"] == "tool_iterations"
    assert not Turn.objects.exists()
    ok = api_client.post(URL, record(seat, tools_called=["a", "b", "a"], tool_iterations=2), token=seat_token)
    assert ok.status_code == 202 and Turn.objects.get().payload["tool_iterations"] == 2


def test_every_field_the_gates_read_rides_on_the_record(seat, seat_token, api_client):
    body = record(seat, schedule="", worker_completed=True, self_persisted=True, skills_offered=[3, 4],
                  tools_called=["a", "b", "a"], ask="asked", subject_is_label=False, work_item="jira:PLAT-1")
    api_client.post(URL, body, token=seat_token)
    stored = Turn.objects.get().payload
    for key in ("run_id", "work_key", "seat", "conversation_id", "conversation_kind", "label", "subject_is_label", "ask",
                "plan_summary", "tool_sequence", "tools_called", "review_outcome", "failure_set_by", "skills_offered",
                "interactions", "self_persisted", "worker_completed"):
        assert stored[key] == body[key], key


def test_a_seat_token_may_post_only_its_own_turns(seat, other_seat, api_client):
    response = api_client.post(URL, record(other_seat), token=token_for(seat))
    assert response.status_code == 403 and not Turn.objects.exists()


def test_an_operator_token_cannot_post_a_seats_turn(seat, company, api_client):
    response = api_client.post(URL, record(seat), token=operator_token(company))
    assert response.status_code == 403 and "operator token cannot run a seat's turn" in response.json()["detail"]
    assert not Turn.objects.exists()


def prefetch_for(api_client, seat, run_id, **fields):
    body = {"run_id": run_id, **fields}
    return api_client.post(f"/api/v1/agents/{seat.handle}/prefetch", body, token=token_for(seat)).json()


def test_a_record_without_skills_offered_takes_them_from_the_runs_frozen_prefetch(seat, api_client):
    offered = [skill(seat, "export-check", "check the nightly export").pk, skill(seat, "triage", "triage a page").pk]
    answer = prefetch_for(api_client, seat, "run-closed", ask="is the export fine?")
    assert sorted(answer["skills_offered"]) == sorted(offered) and answer["ask"] == "is the export fine?"
    body = record(seat, run_id="run-closed", interactions=[])
    del body["skills_offered"]
    assert api_client.post(URL, body, token=token_for(seat)).status_code == 202
    stored = Turn.objects.get().payload
    assert stored["skills_offered"] == answer["skills_offered"]  # in prompt order
    assert stored["ask"] == "is the export fine?"  # the ask the turn start derived and embedded


def test_the_runtimes_explicit_skills_and_ask_win_over_the_prefetchs(seat, api_client):
    kept = skill(seat, "export-check").pk
    skill(seat, "triage")
    prefetch_for(api_client, seat, "run-explicit", ask="is the export fine?")
    body = record(seat, run_id="run-explicit", skills_offered=[kept], ask="check the export", interactions=[])
    api_client.post(URL, body, token=token_for(seat))
    assert (Turn.objects.get().payload["skills_offered"], Turn.objects.get().payload["ask"]) == ([kept], "check the export")


def test_the_ask_is_the_same_text_at_turn_start_and_in_the_stored_record(seat, api_client):
    trigger = {"label": "Message from Maya: Slack message",
               "interactions": [{"sender": {"handle": "maya", "display_name": "Maya"}, "body": "Is the export done?"}]}
    answer = prefetch_for(api_client, seat, "run-ask", **trigger)
    body = record(seat, run_id="run-ask", **trigger)
    del body["subject_is_label"]
    api_client.post(URL, body, token=token_for(seat))
    assert answer["ask"] == "Is the export done?"  # a chat message's subject is only the surface's name
    assert record_of(Turn.objects.get()).the_ask == answer["ask"]


def test_a_record_with_no_prefetch_and_no_skills_stores_none_offered(seat, seat_token, api_client):
    body = record(seat)
    del body["skills_offered"]
    api_client.post(URL, body, token=seat_token)
    assert Turn.objects.get().payload["skills_offered"] == []


def test_no_token_is_401(seat, api_client):
    assert api_client.post(URL, record(seat)).status_code == 401


def test_run_ids_are_unique_per_seat_so_another_seat_cannot_squat_one(seat, other_seat, api_client):
    body = record(seat)
    assert api_client.post(URL, body, token=token_for(seat)).status_code == 202
    theirs = {**body, "seat": other_seat.handle}
    response = api_client.post(URL, theirs, token=token_for(other_seat))
    assert response.status_code == 202 and response.json()["status"] == "accepted"
    assert sorted(Turn.objects.values_list("seat__handle", "run_id")) == sorted(
        [(seat.handle, body["run_id"]), (other_seat.handle, body["run_id"])])
    again = api_client.post(URL, theirs, token=token_for(other_seat))
    assert again.status_code == 200 and again.json()["turn_id"] == response.json()["turn_id"]


def test_a_repeated_run_id_with_another_payload_is_409_naming_the_fields_that_differ(seat, api_client):
    body = record(seat)
    first = api_client.post(URL, body, token=token_for(seat))
    changed = {**body, "ask": "a different ask", "review_outcome": "failed", "failure_set_by": "reviewer"}
    response = api_client.post(URL, changed, token=token_for(seat))
    assert response.status_code == 409
    answer = response.json()
    assert answer["field"] == "run_id" and answer["differing_fields"] == ["ask", "failure_set_by", "review_outcome"]
    assert "ask" in answer["detail"] and "review_outcome" in answer["detail"]
    stored = Turn.objects.get()
    assert stored.pk == first.json()["turn_id"] and stored.payload["ask"] == body["ask"]


def test_each_seats_turn_takes_skills_offered_from_its_own_prefetch_of_a_shared_run_id(seat, other_seat, api_client):
    mine = skill(seat, "export-check", "check the nightly export").pk
    theirs = skill(other_seat, "triage", "triage a page").pk
    assert prefetch_for(api_client, seat, "run-shared", ask="is the export fine?")["skills_offered"] == [mine]
    other_prefix = prefetch_for(api_client, other_seat, "run-shared", ask="triage the page")
    assert other_prefix["frozen"] is False and other_prefix["skills_offered"] == [theirs]
    for who in (seat, other_seat):
        body = record(who, run_id="run-shared", interactions=[])
        del body["skills_offered"]
        assert api_client.post(URL, body, token=token_for(who)).status_code == 202
    assert Turn.objects.get(seat=seat).payload["skills_offered"] == [mine]
    assert Turn.objects.get(seat=other_seat).payload["skills_offered"] == [theirs]


def test_the_route_and_its_schema_are_in_the_openapi_document(client):
    document = client.get("/api/v1/openapi.json").json()
    assert "post" in document["paths"]["/api/v1/turns"]
    schema = document["components"]["schemas"]["TurnRecord"]
    assert {"run_id", "conversation_kind", "review_outcome"} <= set(schema["required"])
    assert schema["additionalProperties"] is False


def test_the_reflection_task_enqueued_on_commit_reflects_the_turn(seat, seat_token, api_client,
                                                                  django_capture_on_commit_callbacks):
    from django.utils.module_loading import import_string

    with django_capture_on_commit_callbacks(execute=True):
        response = api_client.post(URL, record(seat), token=seat_token)

    assert response.status_code == 202
    task = OrmQ.objects.get().task
    import_string(task["func"])(*task["args"])  # what a qcluster worker does with it
    assert Turn.objects.get().reflected_at is not None


def test_a_turn_whose_transaction_rolls_back_leaves_no_task(seat, django_capture_on_commit_callbacks):
    from django.db import transaction

    from learning.intake.record import TurnRecord
    from learning.intake.turns import store_turn

    class Abort(Exception):
        pass

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with pytest.raises(Abort), transaction.atomic():
            store_turn(seat=seat, record=TurnRecord.model_validate(record(seat)))
            raise Abort
    assert callbacks == []
    assert not Turn.objects.exists() and not OrmQ.objects.exists()


def test_a_broker_outside_the_database_is_handed_the_task_once_the_turn_commits(
    seat, monkeypatch, django_capture_on_commit_callbacks
):
    from django.db import transaction
    from django_q.conf import Conf

    from learning.intake import turns
    from learning.intake.record import TurnRecord

    monkeypatch.setattr(Conf, "ORM", None)  # as with CREWLET_Q_REDIS
    handed = []
    monkeypatch.setattr(turns, "_task", lambda turn_id, seat_id: handed.append(turn_id))
    with django_capture_on_commit_callbacks(execute=True):
        with transaction.atomic():
            turn, created = turns.store_turn(seat=seat, record=TurnRecord.model_validate(record(seat)))
            assert created and handed == []  # a worker outside the database could not see the turn yet
    assert handed == [turn.pk]
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError), transaction.atomic():
        turns.store_turn(seat=seat, record=TurnRecord.model_validate(record(seat)))
        raise RuntimeError("the caller's transaction fails")
    assert handed == [turn.pk]


def test_a_record_that_carries_its_ask_and_skills_never_reads_the_prefetch_snapshot(seat, seat_token, api_client):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    body = record(seat, ask="check the export", skills_offered=[])
    with CaptureQueriesContext(connection) as queries:
        assert api_client.post(URL, body, token=seat_token).status_code == 202
    assert not [q for q in queries.captured_queries if "prefetchsnapshot" in q["sql"]]
    assert Turn.objects.get().payload["ask"] == "check the export"
    omitting = record(seat, ask="check the export")
    del omitting["skills_offered"]
    with CaptureQueriesContext(connection) as queries:  # something to complete: the snapshot is read
        assert api_client.post(URL, omitting, token=seat_token).status_code == 202
    assert [q for q in queries.captured_queries if "prefetchsnapshot" in q["sql"]]


def test_the_queue_logs_no_line_per_enqueued_turn_but_its_other_lines_pass(seat, seat_token, api_client,
                                                                           django_capture_on_commit_callbacks):
    import logging

    seen = []

    class Keep(logging.Handler):
        def emit(self, rec):
            seen.append(rec.getMessage())

    logger, handler = logging.getLogger("django-q"), Keep()
    logger.addHandler(handler)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            assert api_client.post(URL, record(seat), token=seat_token).status_code == 202
        assert OrmQ.objects.count() == 1
        logger.info("Q Cluster crewlet starting.")
    finally:
        logger.removeHandler(handler)
    assert seen == ["Q Cluster crewlet starting."]


def test_an_accepted_turn_is_one_read_and_two_inserts(seat, seat_token, api_client, django_capture_on_commit_callbacks):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    assert api_client.post(URL, record(seat), token=seat_token).status_code == 202  # the token's last-used stamp is fresh
    with CaptureQueriesContext(connection) as queries, django_capture_on_commit_callbacks(execute=True):
        assert api_client.post(URL, record(seat, ask="check the export", skills_offered=[]), token=seat_token).status_code == 202
    sqls = [q["sql"] for q in queries.captured_queries]
    reads, inserts = [s for s in sqls if s.startswith("SELECT")], [s for s in sqls if s.startswith("INSERT")]
    assert len(reads) == 1 and '"crewlet_apitoken"' in reads[0]  # the token check
    assert len(inserts) == 2 and '"learning_turn"' in inserts[0] and '"django_q_ormq"' in inserts[1]
    # and nothing else but the transaction's edges (a savepoint here: the test holds a transaction open)
    assert len(sqls) - len(reads) - len(inserts) <= 2, sqls


@pytest.mark.django_db(transaction=True)
def test_a_task_insert_that_fails_stores_nothing_and_is_answered_503_and_the_retry_stores_both(
    seat, seat_token, api_client
):
    from django.db import OperationalError, connection

    def queue_table_locked(execute, sql, params, many, context):
        if sql.startswith('INSERT INTO "django_q_ormq"'):
            raise OperationalError("lock timeout on the queue table")
        return execute(sql, params, many, context)

    body = record(seat)
    with connection.execute_wrapper(queue_table_locked):
        response = api_client.post(URL, body, token=seat_token)
    assert response.status_code == 503 and response["Retry-After"]
    assert not Turn.objects.exists() and not OrmQ.objects.exists()
    retried = api_client.post(URL, body, token=seat_token)
    assert retried.status_code == 202
    assert OrmQ.objects.get().task["args"] == (retried.json()["turn_id"],)
