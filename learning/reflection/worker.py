"""The one shape every reflection worker has (``registry.WORKERS`` lists them in the walk's order).

A worker's ``run`` is the first half of the pass: the reads, model calls and embeds, no writes. It
returns either its finished outcome (``WorkerRan``: nothing to write) or the write the dispatcher
runs later inside the pass's one transaction, whose result dict becomes the ``WorkerRan`` outcome.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from crewlet.config.schema import Learning
from learning.events import WorkerRan
from learning.reflection.turn_context import TurnContext

Write = Callable[[], dict[str, Any]]  # the worker's writes; returns what the outcome reports
Prepared = WorkerRan | Write


class Worker(Protocol):
    name: str  # the name the pass record reports the worker under

    def wired(self, learning: Learning) -> bool:
        """Whether the company-wide ``[learning]`` knobs build this worker at all (unbuilt: not a skip)."""
        ...

    def applies(self, ctx: TurnContext) -> str | None:
        """The worker's own gate that closes for this turn, or None."""
        ...

    def run(self, ctx: TurnContext) -> Prepared:
        """The first half: the outcome, or the write the pass's transaction runs."""
        ...
