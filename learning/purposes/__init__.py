"""Every auxiliary decision the project asks a model: one module a purpose, and ONE list.

Each module holds its purpose's prompt, its pydantic answer model and parser, and its offline
heuristic; ``PURPOSES`` below is the registry (``settings.CREWLET_PURPOSES`` names it and
``core.purposes.get`` loads it on the first lookup, so no caller imports a module to register it).
The modules ``describe``, ``heuristics`` and ``skill_reflection`` are what the post-turn purposes
share: how a turn is described, the offline text rules, and the skill-reflection section.
"""

from learning.purposes import (
    artifact_classify,
    artifact_draft,
    compaction_summary,
    condense,
    episode_summary,
    knowledge_query,
    memory_relevance_filter,
    persist_decision,
    profile_update,
    skill_draft,
    skill_promotion_draft,
    skill_refinement,
    transcript_judge,
    transcript_shards,
)

PURPOSES = [
    # turn start (the prefetch)
    memory_relevance_filter.PURPOSE,
    knowledge_query.PURPOSE,
    episode_summary.PURPOSE,
    condense.PURPOSE,
    # after the turn (the reflection workers)
    persist_decision.PURPOSE,
    profile_update.PURPOSE,
    skill_draft.PURPOSE,
    skill_refinement.PURPOSE,
    # background passes
    compaction_summary.PURPOSE,
    skill_promotion_draft.PURPOSE,
    # the transcript loop
    transcript_shards.PURPOSE,
    transcript_judge.PURPOSE,
    artifact_classify.PURPOSE,
    artifact_draft.PURPOSE,
]

__all__ = ["PURPOSES"]
