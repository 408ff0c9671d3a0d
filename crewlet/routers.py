"""Every router the API mounts, by prefix. Each module below exposes ``router``.

Listed here once so that capabilities land without touching each other's files; a module that
does not exist yet is skipped.
"""

import importlib

_ROUTERS = [
    ("/", "crewlet.org_api"),
    ("/", "learning.api.turns"),  # POST /turns (intake)
    ("/", "learning.api.agents"),  # prefetch, tools, memory read
    ("/", "knowledge.api"),  # knowledge search / review
    ("/", "learning.transcripts.api"),  # publish_memory, reject_memory, review_recommendation
]


def ROUTERS():
    for prefix, module in _ROUTERS:
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name == module:
                continue
            raise
        yield prefix, mod.router
