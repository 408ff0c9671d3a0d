"""Which model permissions each /learning/ page needs: the ones the admin asks for the same rows.

A page shows rows of several models; the user needs ``view`` on each (the admin would refuse the
changelist otherwise). The leads group (``learning.review.leads``) holds all of them; a staff user without
them is answered 403 naming what is missing. Forget and correct also need the change/delete
permission ``learning.review.note_actions`` checks.
"""

from __future__ import annotations

DIARY = "learning.view_diaryentry"
EPISODES = "learning.view_episode"
SKILLS = "learning.view_synthesizedskill"
PROFILES = "learning.view_counterpartyprofile"
EVENTS = "core.view_event"
HEALTH = "learning.view_learninghealth"

MEMORY = (DIARY, EPISODES, SKILLS, PROFILES, EVENTS)  # the memory tab: every section and the last reflection
SECTION = {"diary": (DIARY,), "episodes": (EPISODES,), "skills": (SKILLS,), "profiles": (PROFILES,)}
TURN = ("learning.view_turn", "learning.view_prefetchsnapshot", DIARY, EPISODES, SKILLS, EVENTS)
HOME = ("knowledge.view_draftpage", "transcripts.view_shard", "transcripts.view_recommendation", HEALTH)
DASHBOARD = (HEALTH, EVENTS)


def refusal(user, perms: tuple[str, ...]) -> str | None:
    """Why ``user`` may not see a page needing ``perms`` (the permissions lacking, named), or None."""
    lacking = [perm for perm in perms if not user.has_perm(perm)]
    return f"{user.get_username()} lacks the {', '.join(lacking)} permission(s)" if lacking else None
