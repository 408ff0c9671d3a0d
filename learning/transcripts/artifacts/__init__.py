"""Published lessons into artifacts: classify (eight tiers), inventory, draft, review and install."""

from learning.transcripts.artifacts.classify import classify, normalise_scope
from learning.transcripts.artifacts.inventory import inventory
from learning.transcripts.artifacts.recommend import recommend
from learning.transcripts.artifacts.review import install, review_recommendation

__all__ = ["classify", "install", "inventory", "normalise_scope", "recommend", "review_recommendation"]
