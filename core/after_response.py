"""Work a request does once its response has gone: the client stops waiting before it runs.

A view's code calls ``later(work)``. Inside a request served through ``AfterResponseMiddleware`` the
work runs when the server closes the response: after its last byte is written (the WSGI server and
Django's ASGI handler both close a response once it is sent), before the worker thread takes its next
request, and before ``request_finished`` lets the request's connections go. Anywhere else -- a
management command, a task, a test calling the function directly, django-ninja's ``TestClient`` -- it
runs at once, where ``later`` was called.

Work may name what it writes (``key``): until it has run, a reader of that thing in this process
waits for it (``settled``), so the next request of a client that has its response never reads around
it. (Another process's reader does not wait: there the writes land a few milliseconds after the
response.) What is lost by it: work queued by a process that dies between sending a response and
closing it. The turn start uses it for its writes (``learning.prefetch.assemble``).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
from collections.abc import Callable, Hashable, Iterator

log = logging.getLogger("core.after_response")

SETTLE_WAIT = 10.0  # seconds a reader waits at most for keyed work queued after a response

_unsettled: dict[Hashable, threading.Event] = {}  # keyed work queued and not yet run, this process
_unsettled_lock = threading.Lock()

_queued: contextvars.ContextVar[list[Callable[[], None]] | None] = contextvars.ContextVar("after_response", default=None)


def serving() -> bool:
    """Whether a response is being served here, so that ``later``'s work waits until it is sent."""
    return _queued.get() is not None


def later(work: Callable[[], None], *, key: Hashable | None = None) -> None:
    """Run ``work`` once the current response has been sent; at once where no response is being served.

    With a ``key``, ``settled(key)`` waits for it until it has run (or failed)."""
    queue = _queued.get()
    if queue is None:
        work()
        return
    if key is None:
        queue.append(work)
        return
    done = threading.Event()
    with _unsettled_lock:
        _unsettled[key] = done

    def keyed() -> None:
        try:
            work()
        finally:
            with _unsettled_lock:
                if _unsettled.get(key) is done:
                    del _unsettled[key]
            done.set()

    queue.append(keyed)


def settled(key: Hashable, timeout: float = SETTLE_WAIT) -> None:
    """Wait until no work of ``key`` is queued after a response in this process (at most ``timeout``)."""
    with _unsettled_lock:
        pending = _unsettled.get(key)
    if pending is not None:
        pending.wait(timeout)


def run(queue: list[Callable[[], None]]) -> None:
    """Run what was queued, in order; a failure is logged and the rest still run."""
    while queue:
        work = queue.pop(0)
        try:
            work()
        except Exception:
            log.exception("work after a response failed")


@contextlib.contextmanager
def deferring() -> Iterator[list[Callable[[], None]]]:
    """Queue ``later``'s work inside the block; the caller runs the yielded queue (``run``) when its response is gone."""
    queue: list[Callable[[], None]] = []
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
        with deferring() as queue:
            response = self.get_response(request)
        if queue:
            # the closers run in ``HttpResponseBase.close()`` before ``request_finished`` (which may close
            # the request's connections); Django swallows a closer's exception, so ``run`` logs its own
            response._resource_closers.append(lambda: run(queue))
        return response
