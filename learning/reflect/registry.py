"""The post-turn workers, in the order the dispatcher walks them."""

from __future__ import annotations

from crewlet import config
from learning.reflect.episodist import Episodist
from learning.reflect.persist_decider import PersistDecider
from learning.reflect.profiler import Profiler
from learning.reflect.refiner import Refiner
from learning.reflect.skill_use import SkillUse
from learning.reflect.synthesizer import Synthesizer
from learning.reflect.worker import Worker

WORKERS: tuple[Worker, ...] = (PersistDecider(), Episodist(), Profiler(), SkillUse(), Synthesizer(), Refiner())


def wired_workers() -> list[Worker]:
    """The workers this config builds; an unbuilt worker is not a skip, it is not there."""
    learning = config.current().learning
    return [worker for worker in WORKERS if worker.wired(learning)]
