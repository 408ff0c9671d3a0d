"""Work a request does once its response has gone: the client stops waiting before it runs.

A view's code calls ``later(work)``. Inside a request served through ``AfterResponseMiddleware`` the
work runs when the server closes the response: after its last byte is written (the WSGI server and
Django's ASGI handler both close a response once it is sent), before the worker thread takes its next
request, and before ``request_finished`` lets the request's connections go. Anywhere else -- a
management command, a task, a test calling the function directly, django-ninja's ``TestClient`` -- it
runs at once, where ``later`` was called.

What is lost by it: work queued by a process that dies between sending a response and closing it. The
turn start uses it for its bookkeeping writes only (``learning.prefetch.assemble``); nothing a later
request needs is left to it.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
from collections.abc import Callable, Iterator

log = logging.getLogger("core.after_response")

_queued: contextvars.ContextVar[list[Callable[[], None]] | None] = contextvars.ContextVar("after_response", default=None)


def serving() -> bool:
    """Whether a response is being served here, so that ``later``'s work waits until it is sent."""
    return _queued.get() is not None


def later(work: Callable[[], None]) -> None:
    """Run ``work`` once the current response has been sent; at once where no response is being served."""
    queue = _queued.get()
    if queue is None:
        work()
    else:
        queue.append(work)


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
