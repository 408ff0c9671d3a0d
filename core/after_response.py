"""Work a request does once its response has gone: the client stops waiting before it runs.

A view's code calls ``later(work)``. Inside a request served through ``AfterResponseMiddleware`` the
work runs when the server closes the response: after its last byte is written (the WSGI server and
Django's ASGI handler both close a response once it is sent), before the worker thread takes its next
request, and before ``request_finished`` lets the request's connections go. The MCP server queues a
call's work the same way (``deferring``) and runs it once the call's result is handed to the SDK
(``learning.mcp_server.server.AfterSent``). Anywhere else -- a management command, a task, a test calling
the function directly, django-ninja's ``TestClient`` -- it runs at once, where ``later`` was called.

Work whose response a server never closed (a test client that reads a response and drops it) runs
before the next request that thread serves. What is lost by it: work queued by a process that dies
between sending a response and closing it. Nothing a later request reads may be left to it: the turn
start writes its frozen prefix before it answers and only its bookkeeping after
(``learning.prefetch.assemble``).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
from collections.abc import Callable, Iterator

log = logging.getLogger("core.after_response")


class _Work:
    """One piece of queued work, run at most once: by the response's close, or by the thread's next request
    when the response was never closed; a failure is logged, never raised."""

    def __init__(self, work: Callable[[], object]):
        self.work = work
        self.lock = threading.Lock()
        self.ran = False

    def __call__(self) -> None:
        with self.lock:
            if self.ran:
                return
            self.ran = True
            try:
                self.work()
            except Exception:
                log.exception("work after a response failed")


_queued: contextvars.ContextVar[list[_Work] | None] = contextvars.ContextVar("after_response", default=None)
_unclosed = threading.local()  # per thread: the queue of the last response served, until it has run


def later(work: Callable[[], object]) -> None:
    """Run ``work`` once the current response has been sent; at once where no response is being served."""
    queue = _queued.get()
    if queue is None:
        work()
    else:
        queue.append(_Work(work))


def run(queue: list[_Work]) -> None:
    """Run what was queued, in order (what already ran is skipped)."""
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
