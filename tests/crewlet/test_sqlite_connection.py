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


def test_sqlite_keeps_no_memory_statistics_so_two_connections_rank_by_vector_side_by_side():
    """SQLite counts each allocation under one process-wide mutex unless its memory statistics are off, and
    sqlite-vec allocates for every vector it compares: two connections ranking at once took turns row by
    row (bench/vector_recall.py: 2.48x as long as alone, now 0.99x). The library the settings installed counts nothing."""
    import ctypes
    import sqlite3  # pysqlite3, as the settings installed it

    import sqlite_vec
    from pysqlite3 import _sqlite3

    assert sqlite3.__name__ == "pysqlite3"
    library = ctypes.CDLL(_sqlite3.__file__)
    library.sqlite3_memory_used.restype = ctypes.c_int64
    conn = sqlite3.connect(":memory:")
    try:
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.execute("CREATE TABLE v (id INTEGER PRIMARY KEY, embedding BLOB)")
        conn.executemany("INSERT INTO v (embedding) VALUES (vec_f32(?))", [(f"[{i}, 1, 2]",) for i in range(200)])
        nearest = conn.execute("SELECT id FROM v ORDER BY vec_distance_cosine(embedding, vec_f32('[0, 1, 2]')) LIMIT 1")
        assert nearest.fetchone() == (1,)
        assert library.sqlite3_memory_used() == 0
    finally:
        conn.close()
