"""The post-turn workers, by name, in the order the dispatcher walks them.

A worker is a module exposing ``NAME``, ``wired(learning) -> bool`` (whether the engine builds it
at all under the company-wide ``[learning]`` knobs), ``applies(turn_ctx) -> gate name or None`` and
``run(turn_ctx)``: the worker's outcome, or the write (a callable) the dispatcher runs in the pass's
transaction.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from crewlet import config

WORKERS = [
    "learning.reflect.persist_decider",
    "learning.reflect.episodist",
    "learning.reflect.profiler",
    "learning.reflect.skill_use",
    "learning.reflect.synthesizer",
    "learning.reflect.refiner",
]


def all_workers() -> list[ModuleType]:
    return [importlib.import_module(path) for path in WORKERS]


def wired_workers() -> list[ModuleType]:
    """The workers this config builds; an unbuilt worker is not a skip, it is not there."""
    learning = config.current().learning
    return [worker for worker in all_workers() if worker.wired(learning)]


def by_name(name: str) -> ModuleType:
    for worker in all_workers():
        if worker.NAME == name:
            return worker
    raise KeyError(f"no reflection worker named {name!r}")
