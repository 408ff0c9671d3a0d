"""Every process of a ``qcluster`` lives only as long as its parent.

django-q2 runs a main process, one sentinel under it, and the sentinel's workers, pusher and
monitor. None of them watches its parent: after a ``kill -9`` of the main process the sentinel goes
on pulling and running tasks with nothing left to stop it, and after a ``kill -9`` of the sentinel
its children go on pulling and running tasks with nobody to restart a dead worker or save a result.

``arm(cluster)``, called before ``cluster.start()`` (the project's ``qcluster`` command does),
registers a fork hook, so every process the cluster forks watches its parent from its first
instant:

- the sentinel, forked by the main process, stops the cluster the way SIGTERM would once the main
  process is gone: it sets the cluster's stop event, so the pusher stops pulling, each worker
  finishes the task it holds, and the monitor saves the results;
- every other process (a worker, the pusher, the monitor, started or restarted by the sentinel)
  exits at once when its parent is gone: nobody would save what it finishes, and a task it held is
  delivered again by the broker (and its turn re-driven by the backlog sweep).

A process whose parent dies is re-parented, so a change of ``os.getppid()`` is the parent's death.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger("crewlet.queue_lifeline")

POLL_SECONDS = 0.5  # how soon a process notices its parent is gone


def arm(cluster: Any) -> None:
    """Tie every process ``cluster`` forks to its parent's life (see the module's docstring)."""
    main = os.getpid()

    def stop_cluster() -> None:
        log.warning("qcluster main process %s is gone: stopping the cluster", main)
        cluster.stop_event.set()

    def after_fork_in_child() -> None:
        parent = os.getppid()
        if parent == main:
            watch(parent, stop_cluster)
        else:
            watch(parent, leave)

    os.register_at_fork(after_in_child=after_fork_in_child)


def leave() -> None:
    log.warning("qcluster process %s: its parent is gone, exiting", os.getpid())
    os._exit(1)


def watch(parent: int, on_death: Callable[[], None], every: float = POLL_SECONDS) -> threading.Thread:
    """Call ``on_death`` once, when this process's parent is no longer ``parent``."""

    def run() -> None:
        stop = threading.Event()
        while not stop.wait(every):
            if os.getppid() != parent:
                on_death()
                return

    thread = threading.Thread(target=run, name=f"lifeline-{parent}", daemon=True)
    thread.start()
    return thread
