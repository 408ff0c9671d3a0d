"""The purposes the post-turn workers ask (importing this package registers them)."""

from learning.reflect.purposes.persist_decision import PERSIST_DECISION
from learning.reflect.purposes.profile_update import PROFILE_UPDATE
from learning.reflect.purposes.skill_draft import SKILL_DRAFT
from learning.reflect.purposes.skill_refinement import SKILL_REFINEMENT

__all__ = ["PERSIST_DECISION", "PROFILE_UPDATE", "SKILL_DRAFT", "SKILL_REFINEMENT"]
