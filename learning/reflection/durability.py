"""One durable flush for a drain's passes instead of one a pass.

Each pass still commits on its own (the next pass of the drain reads what it wrote), but inside
``deferred()`` those commits do not wait for the disk (``synchronous_commit=off``). Leaving the
block restores the connection's setting and makes one durable commit, whose flush of the log covers
every commit before it (the log is written in order). A crash before that flush loses a suffix of
whole passes, never part of one: those turns are unreflected again, with everything their passes
wrote, and the next task or the backlog sweep reflects them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection
from django.db.models import F

log = logging.getLogger("learning.reflection.durability")

LEVELS = ("on", "off", "local", "remote_write", "remote_apply")  # synchronous_commit's values


@contextmanager
def deferred(anchor_turn_id: int) -> Iterator[None]:
    """Commits inside skip their own flush; the exit flushes them all by one durable write (the
    ``anchor_turn_id`` row's ``reflected_at`` rewritten to itself)."""
    from learning.models import Turn

    if connection.in_atomic_block:  # the caller's transaction decides durability
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        level = str(cursor.fetchone()[0])
        restore = f"SET synchronous_commit TO {level}" if level in LEVELS else "RESET synchronous_commit"
        cursor.execute("SET synchronous_commit TO off")
    try:
        yield
    finally:
        try:
            with connection.cursor() as cursor:
                cursor.execute(restore)
            # one durable commit: its flush carries every deferred commit before it
            Turn.objects.filter(pk=anchor_turn_id).update(reflected_at=F("reflected_at"))
        except Exception:  # a broken connection is discarded (and its setting with it) by the next check
            log.warning("the drain's durable flush failed; its passes are flushed with the next commit",
                        exc_info=True)
