"""The one shape every reflection worker has (``registry.WORKERS`` lists them in the walk's order).

A worker's ``run`` is the first half of the pass: the reads, model calls and embeds, no writes. It
returns either its finished result (nothing to write) or the write the dispatcher runs later inside
the pass's one transaction, which returns the result. A result is the worker's own pydantic model;
the pass record (``WorkerRan``) keeps the fields it set.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from crewlet.config.schema import Learning
from learning.reflection.turn_context import TurnContext


class Result(BaseModel):
    """What a worker reports on the pass record: only the fields it set are recorded."""

    model_config = ConfigDict(extra="forbid")

    def recorded(self) -> dict[str, Any]:
        return self.model_dump(exclude_unset=True)


class Answered(Result):
    """A result of a worker that asked a model: who answered (``TurnContext.consult``)."""

    answered_by: str | None = None
    fallback: str | None = None


Write = Callable[[], Result]  # the worker's writes; returns what the outcome reports
Prepared = Result | Write


class Worker(Protocol):
    name: str  # the name the pass record reports the worker under

    def wired(self, learning: Learning) -> bool:
        """Whether the company-wide ``[learning]`` knobs build this worker at all (unbuilt: not a skip)."""
        ...

    def applies(self, ctx: TurnContext) -> str | None:
        """The worker's own gate that closes for this turn, or None."""
        ...

    def run(self, ctx: TurnContext) -> Prepared:
        """The first half: the result, or the write the pass's transaction runs."""
        ...
