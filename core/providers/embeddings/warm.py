"""Load the embedder when a process starts, so the first turn after a start has its vector.

``warm()`` embeds one word through the configured embedder (whatever its kind: a local model loads
its weights, a remote one answers a first request), once per process and spec. ``start()`` does the
same on a background thread (a web process answers while it loads); ``wait_while_loading()`` is what
``embed_many`` calls first, so an embed that arrives during that load waits for it instead of
spending its budget on it and storing the row vectorless.
"""

from __future__ import annotations

import logging
import threading
import time

from core.providers import in_force

log = logging.getLogger("core.embeddings")

LOAD_WAIT_SECONDS = 120.0  # the longest an embed waits for a load in progress (a cold CPU model)
WARM_TEXT = "warm-up"

_lock = threading.Lock()
_done = threading.Event()
_thread: threading.Thread | None = None
_warmed_spec = None
waiters = 0  # embeds that have waited on a load (read by tests and the health page)


def warm() -> float | None:
    """Load the configured embedder now; the seconds it took, or None when embeddings are off.

    Never raises: a failure is logged, and the first real embed reports it as usual.
    """
    global _warmed_spec
    from core.providers.embeddings.base import _embed_whole, get_embedder

    spec = in_force.providers().embeddings
    started = time.monotonic()
    try:
        embedder = get_embedder()
        if embedder is None:
            return None
        if _warmed_spec != spec:
            _embed_whole(embedder, [WARM_TEXT])
            _warmed_spec = spec
    except Exception as exc:  # the embed path reports its own errors; a warm-up only logs
        log.warning("embedder warm-up failed: %s", exc)
        return None
    elapsed = time.monotonic() - started
    log.info("embedder %s ready in %.2fs", spec.model, elapsed)
    return elapsed


def _run() -> None:
    try:
        warm()
    finally:
        _done.set()


def start() -> threading.Thread:
    """Warm up on a background thread, once per process; embeds wait for it (``wait_while_loading``)."""
    global _thread
    with _lock:
        if _thread is None:
            _done.clear()
            _thread = threading.Thread(target=_run, name="embedder-warm-up", daemon=True)
            _thread.start()
        return _thread


def warmed() -> bool:
    """Whether this process has loaded the configured embedder."""
    return _warmed_spec is not None


def on_worker_spawn(sender=None, **kwargs) -> None:
    """django-q2's ``post_spawn``: a queue worker loads the embedder before it takes its first task."""
    warm()


def loading() -> bool:
    return _thread is not None and not _done.is_set()


def wait_while_loading(timeout: float = LOAD_WAIT_SECONDS) -> None:
    """Block while a warm-up started by ``start()`` is still loading (at most ``timeout``)."""
    global waiters
    if loading() and threading.current_thread() is not _thread:
        waiters += 1
        _done.wait(timeout)


def reset() -> None:
    """Forget this process's warm-up (tests; a config change of the embedder re-warms on the next call)."""
    global _thread, _warmed_spec
    with _lock:
        _thread, _warmed_spec = None, None
        _done.clear()
