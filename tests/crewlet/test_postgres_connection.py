"""PostgreSQL connections: parameters bound by the server, a repeated statement prepared once,
timestamps parsed by psycopg's C loader where it reads what Django's would."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone

import pytest
from django.db import connection

from crewlet.models import Company
from crewlet.pg_driver import use_c_timestamps

pytestmark = pytest.mark.usefixtures("require_postgres")


def test_a_statement_run_twice_is_prepared_on_the_server(db):
    assert connection.settings_dict["OPTIONS"]["server_side_binding"] is True
    connection.ensure_connection()
    assert connection.connection.prepare_threshold == 2
    Company.objects.create(name="Acme")
    for _ in range(3):  # the same statement, other values: one plan
        assert Company.objects.filter(name="Acme").count() == 1
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [row[0] for row in cursor.fetchall()]
    assert any('FROM "crewlet_company"' in sql and "$1" in sql for sql in prepared)


def test_behind_a_transaction_pooler_preparing_can_be_turned_off():
    probe = "from django.conf import settings; print(settings.DATABASES['default']['OPTIONS'])"
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="crewlet.settings", CREWLET_PG_PREPARE_THRESHOLD="off")
    out = subprocess.run([sys.executable, "-c", f"import django; django.setup(); {probe}"], env=env,
                         capture_output=True, text=True, check=True).stdout
    assert "'prepare_threshold': None" in out and "'server_side_binding': True" in out


def _timestamptz_loader():
    import psycopg
    from psycopg.pq import Format

    return connection.connection.adapters.get_loader(psycopg.postgres.types["timestamptz"].oid, Format.TEXT)


def test_timestamps_are_read_back_as_written_by_the_c_loader_as_djangos_would(db):
    from django.db.backends.postgresql.psycopg_any import register_tzloader

    from crewlet.models import BudgetCounter

    written = [datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC), datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
               datetime(2024, 2, 29, 12, 0, tzinfo=timezone(timedelta(hours=5, minutes=30)))]
    for i, when in enumerate(written):
        BudgetCounter.objects.create(scope="seat", scope_id=i, window_start=when)
    connection.ensure_connection()
    assert _timestamptz_loader().__name__ == "UtcTimestamps"  # registered on every new connection

    read = list(BudgetCounter.objects.order_by("scope_id").values_list("window_start", flat=True))
    register_tzloader(connection.timezone, connection.connection)  # Django's own loader, for comparison
    try:
        djangos = list(BudgetCounter.objects.order_by("scope_id").values_list("window_start", flat=True))
    finally:
        assert use_c_timestamps(connection)
    assert read == written == djangos
    assert all(value.tzinfo is UTC for value in read + djangos)


def test_a_session_in_another_timezone_keeps_djangos_loader(db):
    connection.ensure_connection()
    with connection.cursor() as cursor:
        cursor.execute("SET TIME ZONE 'Europe/Paris'")
        try:
            assert use_c_timestamps(connection) is False
        finally:
            cursor.execute("SET TIME ZONE 'UTC'")
    assert use_c_timestamps(connection) is True


def test_a_bulk_insert_past_the_servers_parameter_limit_stores_every_row(seat):
    from learning.models import Episode

    now = datetime.now(UTC)
    rows = [Episode(seat=seat, run_id=f"bulk-{i}", task_summary=f"task {i}", ask="Fix the failing job.",
                    started_at=now, ended_at=now) for i in range(5000)]
    assert len(rows) * len(Episode._meta.concrete_fields) > 65_535  # one statement would be refused by the server
    Episode.objects.bulk_create(rows)
    assert Episode.objects.filter(seat=seat, run_id__startswith="bulk-").count() == 5000
