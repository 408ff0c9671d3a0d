"""SQLite connections: WAL, sqlite-vec, and the fsync policy CREWLET_SQLITE_SYNCHRONOUS picks."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.db import connections

from tests.conftest import engine_vendor

# PRAGMA synchronous answers a number
LEVEL = {"OFF": 0, "NORMAL": 1, "FULL": 2, "EXTRA": 3}


@pytest.fixture
def fresh_connection(db):
    """A new connection to the test database, so the connect-time settings run again."""
    if engine_vendor() != "sqlite":
        pytest.skip("runs in the SQLite engine pass")
    made = []

    def _open():
        conn = connections.create_connection("default")
        conn.ensure_connection()
        made.append(conn)
        return conn

    yield _open
    for conn in made:
        conn.close()


def pragma(conn, name: str):
    with conn.cursor() as cursor:
        cursor.execute(f"PRAGMA {name}")
        return cursor.fetchone()[0]


def test_a_connection_syncs_every_commit_by_default(fresh_connection):
    conn = fresh_connection()
    assert pragma(conn, "synchronous") == LEVEL["FULL"]
    assert str(pragma(conn, "journal_mode")).lower() == "wal"
    with conn.cursor() as cursor:  # sqlite-vec is loaded on the same connection
        cursor.execute("SELECT vec_version()")
        assert cursor.fetchone()[0]


def test_normal_is_an_opt_in(fresh_connection, settings):
    settings.CREWLET_SQLITE_SYNCHRONOUS = "NORMAL"
    assert pragma(fresh_connection(), "synchronous") == LEVEL["NORMAL"]


def test_an_unknown_level_refuses_to_start_naming_the_setting():
    env = dict(os.environ, CREWLET_SQLITE_SYNCHRONOUS="off", DJANGO_SETTINGS_MODULE="crewlet.settings")
    done = subprocess.run([sys.executable, "-c", "import django; django.setup()"], env=env, capture_output=True, text=True,
                          cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert done.returncode != 0
    assert "CREWLET_SQLITE_SYNCHRONOUS must be one of FULL, NORMAL, EXTRA, not 'OFF'" in done.stderr
