"""Queue entry points for the background loops: thin, by dotted path, one a loop.

Each tick asks the config in force whether its pass is on (off claims nothing), claims the loop's
duty and runs the pass under it.
"""

from __future__ import annotations

import logging

log = logging.getLogger("learning.passes.ticks")


def tick(name: str, **kwargs) -> dict:
    """One tick of loop ``name``: skipped when off or held elsewhere; else the pass's own report."""
    from crewlet import config
    from learning.passes import duties, schedules

    loop = schedules.LOOPS[name]
    if not loop.enabled(config.current()):
        return {"ran": False, "why": f"{name} is off in the config in force"}
    fn = schedules.service(name)
    result = duties.run_singleton(loop.schedule_name, lambda: fn(**kwargs))
    log.info("pass %s: %s", name, {k: v for k, v in result.items() if not isinstance(v, (list, dict))})
    return result


def lifecycle(**kwargs) -> dict:
    return tick("lifecycle", **kwargs)


def curator(**kwargs) -> dict:
    return tick("curator", **kwargs)


def clustering(**kwargs) -> dict:
    return tick("clustering", **kwargs)


def embed_fill(**kwargs) -> dict:
    return tick("embed_fill", **kwargs)


def retention(**kwargs) -> dict:
    return tick("retention", **kwargs)


def event_retention(**kwargs) -> dict:
    return tick("event_retention", **kwargs)


def promotion(**kwargs) -> dict:
    return tick("promotion", **kwargs)


def reflect_sweep(**kwargs) -> dict:
    return tick("reflect_sweep", **kwargs)
