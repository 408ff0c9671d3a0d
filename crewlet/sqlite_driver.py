"""Swap the stdlib sqlite3 for pysqlite3 before Django binds its SQLite driver, and turn SQLite's
memory statistics off in it.

This machine's CPython is built without ``enable_load_extension``, and sqlite-vec is an
extension. Django's sqlite3 backend does ``from sqlite3 import dbapi2`` at import time, so the
swap has to happen before any backend module loads: settings import this module first.

Memory statistics: SQLite built with its defaults (pysqlite3-binary is) counts every allocation under
one process-wide mutex. sqlite-vec copies each vector it reads into an allocation of its own (two per
row a distance compares), so two connections of one process ranking by vector at once -- a turn
start's episode recall on its side reader beside the request's own note recall, two requests on one
server process's threads -- took turns on that mutex row by row: 5,000 distances on two threads at
once 9.4 ms each against 4.7 ms alone, no faster than one after the other (``bench/vector_recall.py``
prints both). With the statistics off they run side by side (4.4 ms each). SQLite's own list of
recommended options turns them off (``SQLITE_DEFAULT_MEMSTATUS=0``); the interfaces that read them
(``sqlite3_memory_used``, ``sqlite3_status64``, the heap limits) are used by nothing here.
"""

import ctypes
import logging
import sys

log = logging.getLogger("crewlet.sqlite")

SQLITE_CONFIG_MEMSTATUS = 9  # sqlite3.h


def install() -> bool:
    """Put pysqlite3 in ``sys.modules['sqlite3']``; return False when it is not installed. The first
    import of pysqlite3 (no connection of it can be open yet) also turns its memory statistics off."""
    first = "pysqlite3" not in sys.modules
    try:
        import pysqlite3
        import pysqlite3.dbapi2
    except ImportError:  # pragma: no cover - the dependency is declared
        return False
    if first:
        memory_statistics_off()
    sys.modules["sqlite3"] = pysqlite3
    sys.modules["sqlite3.dbapi2"] = pysqlite3.dbapi2
    return True


def memory_statistics_off() -> bool:
    """Turn SQLite's memory statistics off in pysqlite3's library (above); True when they are off.

    ``sqlite3_config`` takes effect only while the library is shut down, and importing pysqlite3 has
    initialised it: shut down, configure, initialise again. Shutting down with a connection open is
    not allowed, so this is called only where none can be (``install``, at pysqlite3's first import).
    A build that does not export the three functions keeps its statistics (and says so)."""
    try:
        from pysqlite3 import _sqlite3

        library = ctypes.CDLL(_sqlite3.__file__)  # the loaded module's own library: dlopen returns its handle
        shutdown, configure, initialise = library.sqlite3_shutdown, library.sqlite3_config, library.sqlite3_initialize
    except (ImportError, OSError, AttributeError):
        log.info("pysqlite3's SQLite does not export sqlite3_config: its memory statistics stay on")
        return False
    if shutdown() != 0:
        return False
    off = configure(SQLITE_CONFIG_MEMSTATUS, ctypes.c_int(0)) == 0
    if initialise() != 0:  # pragma: no cover - initialising a library that was running
        raise RuntimeError("SQLite did not initialise again after its memory statistics were turned off")
    return off


def load_vec(dbapi_connection) -> None:
    """Load sqlite-vec into one DB-API connection (called from ``connection_created``)."""
    import sqlite_vec

    dbapi_connection.enable_load_extension(True)
    try:
        sqlite_vec.load(dbapi_connection)
    finally:
        dbapi_connection.enable_load_extension(False)
