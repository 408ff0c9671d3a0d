"""What the layers below ``learning.tools`` know of the agent builtins, by name.

``LEARNING_TOOLS`` are how an agent learns, never a step of its work (``learning.procedures`` leaves
them out of a run's procedure). ``withdrawn(seat)`` names the builtins the seat cannot call, each
with the reason: ``learning.tools`` refuses them and leaves them out of its definitions, and the
prefetch's tool guidance (``learning.prefetch.tool_skills``) gives them none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crewlet import config

if TYPE_CHECKING:
    from crewlet.models import Seat

# every builtin but search_knowledge: which page a procedure reads is part of it
LEARNING_TOOLS = frozenset({
    "query_episodes", "refresh_memory", "reflect_and_persist", "use_skill", "refine_skill", "mark_onboarded",
})


def withdrawn(seat: Seat) -> dict[str, str]:
    """The builtins withdrawn for ``seat``, each with the reason it is told."""
    if not config.knobs_for_seat(seat).learning.skill_refinement.enabled:
        return {"refine_skill": "refine_skill is withdrawn: learning.skill_refinement.enabled is false"}
    return {}
