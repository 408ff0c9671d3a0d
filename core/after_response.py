"""Work a request does once its response has gone: the client stops waiting before it runs.

A view's code calls ``later(work)``. Inside a request served through ``AfterResponseMiddleware`` the
work runs when the server closes the response: after its last byte is written (the WSGI server and
Django's ASGI handler both close a response once it is sent), before the worker thread takes its next
request, and before ``request_finished`` lets the request's connections go. Anywhere else -- a
management command, a task, a test calling the function directly, django-ninja's ``TestClient`` -- it
runs at once, where ``later`` was called.

Work may name what it writes (``key``): a reader of that thing in this process calls ``settled(key)``
first, which runs the work there and then if no one has started it yet (or waits while another
thread runs it), so the next request of a client that has its response never reads around it, and
never waits on a server to close one. (Another process's reader does not: there the writes land a
few milliseconds after the response.) Work a server never closed the response of (a test client
that reads a response and drops it) runs before the next request that thread serves. What is lost
by it: work queued by a process that dies between sending a response and closing it. The turn start
uses it for its writes (``learning.prefetch.assemble``).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
from collections.abc import Callable, Hashable, Iterator

log = logging.getLogger("core.after_response")


class _Work:
    """One piece of queued work, run at most once by whichever comes first: the response's close, a
    reader that needs it (``settled``), or the thread's next request; a failure is logged, never raised."""

    def __init__(self, work: Callable[[], object], key: Hashable | None):
        self.work, self.key = work, key
        self.lock = threading.Lock()
        self.ran = False

    def __call__(self) -> None:
        with self.lock:  # a second caller waits here until the first has run it
            if self.ran:
                return
            self.ran = True
            try:
                self.work()
            except Exception:
                log.exception("work after a response failed")
            finally:
                if self.key is not None:
                    with _unsettled_lock:
                        if _unsettled.get(self.key) is self:
                            del _unsettled[self.key]


_unsettled: dict[Hashable, _Work] = {}  # keyed work queued and not yet run, this process
_unsettled_lock = threading.Lock()

_queued: contextvars.ContextVar[list[_Work] | None] = contextvars.ContextVar("after_response", default=None)
_unclosed = threading.local()  # per thread: the queue of the last response served, until it has run


def serving() -> bool:
    """Whether a response is being served here, so that ``later``'s work waits until it is sent."""
    return _queued.get() is not None


def later(work: Callable[[], object], *, key: Hashable | None = None) -> None:
    """Run ``work`` once the current response has been sent; at once where no response is being served.

    With a ``key``, ``settled(key)`` runs it sooner if a reader needs it first."""
    queue = _queued.get()
    if queue is None:
        work()
        return
    queued = _Work(work, key)
    if key is not None:
        with _unsettled_lock:
            _unsettled[key] = queued
    queue.append(queued)


def settled(key: Hashable) -> None:
    """Make sure no work of ``key`` is still queued after a response in this process: run it here if no
    one has started it, or wait while another thread runs it."""
    queued = _unsettled.get(key)
    if queued is not None:
        queued()


def run(queue: list[_Work]) -> None:
    """Run what was queued, in order (what a reader already ran is skipped)."""
    for queued in queue:
        queued()
    queue.clear()


@contextlib.contextmanager
def deferring() -> Iterator[list[_Work]]:
    """Queue ``later``'s work inside the block; the caller runs the yielded queue (``run``) when its response is gone."""
    queue: list[_Work] = []
    token = _queued.set(queue)
    try:
        yield queue
    finally:
        _queued.reset(token)


class AfterResponseMiddleware:
    """Runs a request's ``later`` work when its response is closed, i.e. sent."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        earlier = getattr(_unclosed, "queue", None)
        if earlier:  # this thread's last response was never closed: its work first
            run(earlier)
        with deferring() as queue:
            response = self.get_response(request)
        if queue:
            # the closers run in ``HttpResponseBase.close()`` before ``request_finished`` (which may close
            # the request's connections); Django swallows a closer's exception, and ``_Work`` logs its own
            _unclosed.queue = queue
            response._resource_closers.append(lambda: run(queue))
        return response
