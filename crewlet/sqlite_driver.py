"""Swap the stdlib sqlite3 for pysqlite3 before Django binds its SQLite driver.

This machine's CPython is built without ``enable_load_extension``, and sqlite-vec is an
extension. Django's sqlite3 backend does ``from sqlite3 import dbapi2`` at import time, so the
swap has to happen before any backend module loads: settings import this module first.
"""

import sys


def install() -> bool:
    """Put pysqlite3 in ``sys.modules['sqlite3']``; return False when it is not installed."""
    try:
        import pysqlite3
        import pysqlite3.dbapi2
    except ImportError:  # pragma: no cover - the dependency is declared
        return False
    sys.modules["sqlite3"] = pysqlite3
    sys.modules["sqlite3.dbapi2"] = pysqlite3.dbapi2
    return True


def load_vec(dbapi_connection) -> None:
    """Load sqlite-vec into one DB-API connection (called from ``connection_created``)."""
    import sqlite_vec

    dbapi_connection.enable_load_extension(True)
    try:
        sqlite_vec.load(dbapi_connection)
    finally:
        dbapi_connection.enable_load_extension(False)
