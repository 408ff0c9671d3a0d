"""Why a reflection worker did not run, in words a lead can act on.

The reflection records each stop by a gate's name (``no_offered_skills``); a lead reads the
sentence instead. A gate with no sentence here shows its name, so a new gate is never hidden.
"""

from __future__ import annotations

WORKERS = {
    "persist_decider": "note keeping",
    "profiler": "people profiles",
    "episodist": "turn record",
    "skill_use": "skill use",
    "synthesizer": "new skill",
    "refiner": "skill refinement",
    "skill_reflection": "skill review",
}

GATES = {
    # the whole pass (learning.reflection.dispatcher)
    "no_workers": "no learning worker is switched on",
    "no_role": "the seat has no role, so nothing says what it may learn",
    "role_opted_out": "the seat's role has learning switched off",
    "no_budget": "the seat's token budget is spent; the turn is reflected once it allows",
    "duplicate": "this turn was already reflected",
    "no_engagement": "nothing happened in the turn worth learning from (no tool, no reply)",
    # per worker
    "unsettled": "the turn's outcome is not settled yet (it asked for another round)",
    "self_persisted": "the agent already saved its own note this turn",
    "no_auxiliary_model": "no helper model is configured for this seat",
    "internal_trigger": "a schedule or another agent started the turn, so there is no person to profile",
    "no_human_senders": "no person wrote in this turn, so there is nobody to profile",
    "refinement_disabled": "skill refinement is switched off",
    "auto_refine_on_success_off": "refining after a success is switched off",
    "auto_refine_on_failure_off": "refining after a failure is switched off",
    "no_offered_skills": "no skill was offered this turn",
    "no_live_skills": "the skills offered this turn are archived",
    "reflection_disabled": "skill review is switched off",
    "scheduled_conversation": "a scheduled run, not a conversation with feedback",
    "no_conversation": "the turn belongs to no conversation to review",
    "no_signal": "nobody corrected or praised the work in this conversation",
    "cooldown": "skills were reviewed in this conversation recently",
    "no_persistence_pass": "the note-keeping step did not run, so there was nothing to review",
    "synthesis_disabled": "writing new skills is switched off",
    "too_few_tools": "the turn used too few tools to be worth a skill",
    "max_skills_per_agent": "the seat holds as many skills as it may",
    "duplicate_skill": "the seat already has a skill for this work",
}


def worker_name(worker: str) -> str:
    return WORKERS.get(worker, worker.replace("_", " "))


def why(gate: str) -> str:
    """The gate in plain words; an unknown gate's own name."""
    return GATES.get(gate, gate.replace("_", " "))
