"""PostgreSQL connections: parameters bound by the server, a repeated statement prepared once."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.db import connection

from crewlet.models import Company

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
