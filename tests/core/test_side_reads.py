"""Side reads (``core.side_reads``): a read on a reader thread's own connection, or on the caller's
thread where a reader could not see what the caller sees or none is free."""

from __future__ import annotations

import threading

import pytest
from django.db import DatabaseError, connection, connections, transaction

from core import side_reads
from crewlet.models import Company


def _where(name: str):
    """The thread a read ran on, and whether it saw the company ``name``."""
    return threading.get_ident(), Company.objects.filter(name=name).exists()


def test_in_autocommit_a_read_runs_on_a_reader_with_its_own_connection(transactional_db):
    Company.objects.create(name="Acme")
    seen = []

    def read():
        seen.append(connections["default"])
        return _where("Acme")

    thread, found = side_reads.beside(read)()
    assert thread != threading.get_ident() and found  # committed rows are there for it
    assert seen[0] is not connections["default"]
    side_reads.close_readers()
    assert seen[0].connection is None  # closed, so the test database can be dropped


def test_inside_an_atomic_block_it_runs_here_and_sees_the_blocks_own_rows(transactional_db):
    with transaction.atomic():
        Company.objects.create(name="Uncommitted")
        pending = side_reads.beside(_where, "Uncommitted")
        thread, found = pending()
    assert thread == threading.get_ident() and found


def test_the_reads_error_reaches_the_one_who_waits(transactional_db):
    def broken():
        with connection.cursor() as cursor:
            cursor.execute("SELECT * FROM no_such_table")

    pending = side_reads.beside(broken)
    with pytest.raises(DatabaseError):
        pending()
    assert side_reads.beside(_where, "x")()[1] is False  # the reader's connection still serves the next read


def test_with_every_reader_busy_the_read_runs_on_the_callers_thread(transactional_db):
    release = threading.Event()
    started = threading.Barrier(side_reads.READERS + 1)

    def hold():
        started.wait(5)
        release.wait(5)

    held = [side_reads.beside(hold) for _ in range(side_reads.READERS)]
    started.wait(5)
    try:
        thread, _found = side_reads.beside(_where, "x")()
        assert thread == threading.get_ident()
    finally:
        release.set()
        for wait in held:
            wait()


def test_with_persistent_connections_off_a_reader_closes_its_connection_after_each_read(transactional_db):
    seen = []

    def read():
        seen.append(connections["default"])
        return _where("x")

    shared = connections["default"].settings_dict  # every thread's connection reads the same settings
    kept = shared["CONN_MAX_AGE"]
    shared["CONN_MAX_AGE"] = 0
    try:
        side_reads.beside(read)()
    finally:
        shared["CONN_MAX_AGE"] = kept
    assert seen[0].connection is None
