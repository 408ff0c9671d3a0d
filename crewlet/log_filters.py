"""Log filters the settings attach by name."""

from __future__ import annotations

import logging


class DropPerTaskEnqueueLine(logging.Filter):
    """django-q2 logs ``Enqueued [<queue>] <id>`` at INFO for every task it queues: one stderr line per
    accepted turn, formatted and written on the request's own thread. The turn is already in the
    store and the task row beside it; the queue's other lines (cluster start, failures) still pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.levelno == logging.INFO and str(record.msg).startswith("Enqueued ["))
