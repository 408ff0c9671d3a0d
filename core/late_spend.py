"""Late auxiliary calls: the ones whose caller stopped waiting at its deadline.

A completion made on a seat's behalf is charged whether or not anyone reads its answer. A caller
that gives up on a call (a rewrite or a prefetch call past its shared deadline, or one no block
collected) hands its future to ``abandon``:

- not started yet, it is cancelled: never sent, nothing to charge;
- already running, it is left to finish, and when it returns its spend is recorded (the budget
  counters and one ``auxiliary_spend`` row an attempt, answered or failed) through the
  ``record()`` the seam attached to its result or its error (``auxiliary.call(defer_record=True)``).

The record runs on the thread that finished the call, with its own database connection, closed
afterwards. ``wait`` lets a caller (the test suite, a bench) wait until no late call is still out.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import CancelledError, Future

from django.db import connections

log = logging.getLogger("core.late_spend")

_out: set[Future] = set()  # abandoned calls still running or still being recorded
_settled = threading.Condition()


def abandon(future: Future) -> str:
    """Stop waiting for ``future``: ``cancelled`` (never sent), ``recorded`` (it had returned) or
    ``late`` (its spend is recorded when it returns)."""
    if future.cancel():
        return "cancelled"
    if future.done():
        _record(future)  # it answered just as the caller gave up: charged here, on the caller's thread
        return "recorded"
    with _settled:
        _out.add(future)
    caller = threading.get_ident()
    future.add_done_callback(lambda f: _settle(f, caller))
    return "late"


def _settle(future: Future, caller: int) -> None:
    try:
        _record(future)
    finally:
        if threading.get_ident() != caller:  # a worker thread's own connection, not the caller's
            connections.close_all()
        with _settled:
            _out.discard(future)
            _settled.notify_all()


def _record(future: Future) -> None:
    """Run the call's deferred ``record()``, whether it answered or raised; never raises."""
    try:
        try:
            outcome = future.result()
        except CancelledError:
            return
        except Exception as exc:  # a failed call's attempts are charged too
            outcome = exc
        record = getattr(outcome, "record", None)
        if callable(record):
            record()
    except Exception:
        log.warning("the spend of a late auxiliary call could not be recorded", exc_info=True)


def outstanding() -> int:
    """How many abandoned calls are still running or being recorded."""
    with _settled:
        return len(_out)


def wait(timeout: float) -> int:
    """Wait up to ``timeout`` seconds until every abandoned call has returned and been recorded;
    the number still out (0 when all are settled)."""
    with _settled:
        _settled.wait_for(lambda: not _out, timeout=timeout)
        return len(_out)
