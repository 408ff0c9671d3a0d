"""One durable flush for a drain's passes instead of one a pass.

Each pass still commits on its own (the next pass of the drain reads what it wrote), but inside
``deferred()`` those commits do not wait for the disk: SQLite in WAL mode runs them at
``synchronous=NORMAL`` (no fsync at commit), PostgreSQL with ``synchronous_commit=off``. Leaving
the block restores the connection's setting and makes one durable commit, whose flush of the log
covers every commit before it (both logs are written in order). A crash before that flush loses
a suffix of whole passes, never part of one: those turns are unreflected again, with everything
their passes wrote, and the next task or the backlog sweep reflects them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection
from django.db.models import F

log = logging.getLogger("learning.reflect.durability")

PG_LEVELS = ("on", "off", "local", "remote_write", "remote_apply")  # synchronous_commit's values


def _sqlite_wal() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        return str(cursor.fetchone()[0]).lower() == "wal"


@contextmanager
def deferred(anchor_turn_id: int) -> Iterator[None]:
    """Commits inside skip their own flush; the exit flushes them all by one durable write (the
    ``anchor_turn_id`` row's ``reflected_at`` rewritten to itself)."""
    from learning.models import Turn

    vendor = connection.vendor
    restore = None
    if connection.in_atomic_block:  # the caller's transaction decides durability
        yield
        return
    with connection.cursor() as cursor:
        if vendor == "sqlite" and _sqlite_wal():
            cursor.execute("PRAGMA synchronous")
            restore = f"PRAGMA synchronous={int(cursor.fetchone()[0])}"
            cursor.execute("PRAGMA synchronous=NORMAL")
        elif vendor == "postgresql":
            cursor.execute("SHOW synchronous_commit")
            level = str(cursor.fetchone()[0])
            restore = f"SET synchronous_commit TO {level}" if level in PG_LEVELS else "RESET synchronous_commit"
            cursor.execute("SET synchronous_commit TO off")
    try:
        yield
    finally:
        if restore is not None:
            try:
                with connection.cursor() as cursor:
                    cursor.execute(restore)
                # one durable commit: its flush carries every deferred commit before it
                Turn.objects.filter(pk=anchor_turn_id).update(reflected_at=F("reflected_at"))
            except Exception:  # a broken connection is discarded (and its setting with it) by the next check
                log.warning("the drain's durable flush failed; its passes are flushed with the next commit",
                            exc_info=True)
