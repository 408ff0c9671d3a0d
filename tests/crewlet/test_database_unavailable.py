"""A database that refuses writes or drops the connection answers 503 with ``Retry-After``, as JSON:
the request was fine and is worth retrying, which a generic 500 does not say. Faults are real
PostgreSQL errors, injected through ``connection.execute_wrapper``."""

from __future__ import annotations

import pytest
from django.db import close_old_connections, connection

from crewlet.unavailable import RETRY_AFTER_SECONDS
from learning.models import PrefetchSnapshot, Turn
from tests.learning.reflection.conftest import record


def read_only_from(table: str):
    """The transaction turns read-only just before the first write to ``table``: PostgreSQL itself
    refuses the write (``read_only_sql_transaction``), as a standby or a read-only default would."""

    def wrapper(execute, sql, params, many, context):
        if sql.startswith(f'INSERT INTO "{table}"'):
            execute("SET TRANSACTION READ ONLY", None, False, context)
        return execute(sql, params, many, context)

    return wrapper


def assert_unavailable(response) -> None:
    assert response.status_code == 503, response.content
    assert response["Retry-After"] == str(RETRY_AFTER_SECONDS)
    assert response["Content-Type"].startswith("application/json") and response.json()["detail"]


def test_a_turn_posted_to_a_read_only_database_is_answered_503_with_retry_after(seat, seat_token, api_client):
    with connection.execute_wrapper(read_only_from("learning_turn")):
        response = api_client.post("/api/v1/turns", record(seat), token=seat_token)
    assert_unavailable(response)
    assert not Turn.objects.exists()


def test_a_prefetch_on_a_read_only_database_is_answered_503(seat, seat_token, api_client):
    with connection.execute_wrapper(read_only_from("learning_prefetchsnapshot")):
        response = api_client.post(f"/api/v1/agents/{seat.handle}/prefetch", {"run_id": "run-ro", "ask": "status?"},
                                   token=seat_token)
    assert_unavailable(response)
    assert not PrefetchSnapshot.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_connection_the_server_drops_mid_request_is_answered_503(seat, seat_token, api_client):
    def dropped(execute, sql, params, many, context):
        if sql.startswith('INSERT INTO "learning_turn"'):
            execute("SELECT pg_terminate_backend(pg_backend_pid())", None, False, context)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(dropped):
        response = api_client.post("/api/v1/turns", record(seat), token=seat_token)
    assert_unavailable(response)
    connection.close()  # the dropped one; the next query opens a fresh connection
    assert not Turn.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_connection_dropped_between_requests_is_replaced_before_the_next_one(seat, seat_token, api_client):
    import psycopg

    assert api_client.post("/api/v1/turns", record(seat, run_id="before"), token=seat_token).status_code == 202
    pid = connection.connection.info.backend_pid  # kept open between requests (CONN_MAX_AGE)
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    with psycopg.connect(**params, autocommit=True) as other:  # the server drops it, as a restart would
        other.execute("SELECT pg_terminate_backend(%s)", [pid])

    close_old_connections()  # the start of a request, as the server runs it (the test client skips it)
    assert api_client.post("/api/v1/turns", record(seat, run_id="after"), token=seat_token).status_code == 202
    assert sorted(Turn.objects.values_list("run_id", flat=True)) == ["after", "before"]


def test_a_database_error_that_is_no_outage_stays_a_500(seat, seat_token, api_client):
    from django.db import DatabaseError

    def broken(execute, sql, params, many, context):
        if sql.startswith('INSERT INTO "learning_turn"'):
            raise DatabaseError("a bug, not an outage")
        return execute(sql, params, many, context)

    with connection.execute_wrapper(broken):
        response = api_client.post("/api/v1/turns", record(seat), token=seat_token)
    assert response.status_code == 500 and "Retry-After" not in response


def test_a_leads_action_on_a_read_only_database_is_answered_503_with_retry_after(client, lead, seat):
    """The lead's pages and the admin answer the same outage the same way (``UnavailableMiddleware``)."""
    from django.urls import reverse

    from learning.memory import diary
    from learning.models import DiaryEntry

    note = diary.write(seat=seat, content="Hotfixes to billing go through the release branch", kind=DiaryEntry.LONG)
    client.force_login(lead)
    with connection.execute_wrapper(read_only_before_delete("agent_diary")):
        response = client.post(reverse("learning_pages:forget_note", args=[seat.handle, note.pk]), {"reason": "wrong"})
    assert response.status_code == 503 and response["Retry-After"] == str(RETRY_AFTER_SECONDS)
    assert DiaryEntry.objects.filter(pk=note.pk).exists()


def read_only_before_delete(table: str):
    def wrapper(execute, sql, params, many, context):
        if sql.startswith(f'DELETE FROM "{table}"') or sql.startswith(f'UPDATE "{table}"'):
            execute("SET TRANSACTION READ ONLY", None, False, context)
        return execute(sql, params, many, context)

    return wrapper
