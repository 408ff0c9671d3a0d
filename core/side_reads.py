"""Reads a request runs beside its own: a statement on a reader thread's connection while the request's
thread goes on with the next one.

A turn start's reads are independent of one another, and on both engines a statement runs outside the
interpreter's lock (psycopg waits on the socket, the PostgreSQL backend is a process of its own;
pysqlite releases it around ``sqlite3_step``), so the episode recall -- the turn start's most costly
statement -- can run on a second connection while the request's thread reads the diary, the skills and
the rest. The turn start then takes about as long as its longer half instead of their sum; the work
done is the same (a little more: one thread handoff). On SQLite that needs the library's memory statistics
off (``crewlet.sqlite_driver``): with them on, sqlite-vec's allocations took one process-wide mutex row by
row, the reader's episode recall and the request's note recall took turns on it (prefetch bench, 5,000
episodes: the episode statement 8.8 ms beside the request against 6.9 alone, the note recall 2.2 against
0.95), and a rich turn start took 11.5 ms against 9.2 with them off.

Where it is not done, ``beside`` leaves the read to the caller's own thread, run when its value is
first asked for (where the caller would have run it had there been no reader):

- inside an atomic block: a second connection would not see the block's own uncommitted rows (and the
  test suite runs most tests inside one);
- when every reader is busy (a host serving many turn starts at once): the read would only queue;
  the caller's own thread is as free as any.

Measured and not taken: the episode search's two halves on two readers (PostgreSQL; the words' half
ranked by a statement of its own, started before the vector, then fused with the vector's half in a
third statement -- the same rankings, 60 of 60 searches). The search alone: 10.9 -> 6.8 ms. The whole
turn start, interleaved, load 1.5-2.6 on the 2-core host: 20.7 -> 23.7 ms, worse -- three statements'
worth of CPU at once on two cores, the request's own statements slowed by them, and the second read of
the scope's rows paid on every search.

Each reader thread keeps its connection as a request does (``CONN_MAX_AGE``, health-checked before
reuse), so a side read does not open a backend or reload sqlite-vec; with ``CONN_MAX_AGE`` 0 it is
closed after each read, as a request's is after each request. ``close_readers`` closes them
(the test suite, before its database is dropped).
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable
from typing import TypeVar

from django.db import DEFAULT_DB_ALIAS, connection, connections

T = TypeVar("T")

READERS = 2  # reader threads (each with its own connection) per process

_pool = concurrent.futures.ThreadPoolExecutor(max_workers=READERS, thread_name_prefix="side-read")
_free = threading.BoundedSemaphore(READERS)
_opened: list = []  # the readers' connection wrappers, for close_readers
_opened_lock = threading.Lock()


def beside(read: Callable[..., T], *args, **kwargs) -> Callable[[], T]:
    """Start ``read(*args, **kwargs)`` on a reader's connection; the returned callable waits for its
    value (or raises what it raised). Where a reader cannot help (above), the callable runs the read
    itself, on the caller's thread and connection."""
    if connection.in_atomic_block or not _free.acquire(blocking=False):
        return lambda: read(*args, **kwargs)
    try:
        future = _pool.submit(_read, read, args, kwargs)
    except RuntimeError:  # the pool is shut down (the interpreter is exiting)
        _free.release()
        return lambda: read(*args, **kwargs)
    return future.result


def _read(read, args, kwargs):
    try:
        if connection.connection is None:
            with _opened_lock:
                if connections[DEFAULT_DB_ALIAS] not in _opened:
                    _opened.append(connections[DEFAULT_DB_ALIAS])  # this thread's own wrapper, not the proxy
        else:
            connection.close_if_unusable_or_obsolete()  # as a request's start does: too old, or broken
        connection.ensure_connection()  # the readers below may use the driver's connection directly
        return read(*args, **kwargs)
    finally:
        if not connection.settings_dict["CONN_MAX_AGE"]:  # one connection a request: one a read
            connection.close()
        _free.release()


def close_readers() -> None:
    """Close every reader's connection (each idle: every reader is waited for first)."""
    for _ in range(READERS):
        _free.acquire()
    try:
        with _opened_lock:
            for wrapper in _opened:
                wrapper.inc_thread_sharing()
                try:
                    wrapper.close()
                finally:
                    wrapper.dec_thread_sharing()
    finally:
        for _ in range(READERS):
            _free.release()
