"""The post-turn workers, in the order the dispatcher walks them."""

from __future__ import annotations

from crewlet import config
from learning.reflection.worker import Worker
from learning.reflection.workers.episodist import Episodist
from learning.reflection.workers.persist_decider import PersistDecider
from learning.reflection.workers.profiler import Profiler
from learning.reflection.workers.refiner import Refiner
from learning.reflection.workers.skill_use import SkillUse
from learning.reflection.workers.synthesizer import Synthesizer

WORKERS: tuple[Worker, ...] = (PersistDecider(), Episodist(), Profiler(), SkillUse(), Synthesizer(), Refiner())


def wired_workers() -> list[Worker]:
    """The workers this config builds; an unbuilt worker is not a skip, it is not there."""
    learning = config.current().learning
    return [worker for worker in WORKERS if worker.wired(learning)]
