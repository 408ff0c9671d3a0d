"""The learning tables, one module per family, re-exported here."""

from learning.models.diary import DiaryEntry
from learning.models.episodes import Episode, EpisodePiece
from learning.models.health import LearningHealth
from learning.models.profiles import CounterpartyProfile, OnboardingMarker
from learning.models.promotion import PromotionDraft
from learning.models.runtime import Duty, FillMinute, PrefetchSnapshot, RefreshLedger
from learning.models.skills import SkillVersion, SynthesizedSkill
from learning.models.turns import ConversationState, Turn

__all__ = [
    "ConversationState",
    "CounterpartyProfile",
    "DiaryEntry",
    "Duty",
    "Episode",
    "EpisodePiece",
    "FillMinute",
    "LearningHealth",
    "OnboardingMarker",
    "PrefetchSnapshot",
    "PromotionDraft",
    "RefreshLedger",
    "SkillVersion",
    "SynthesizedSkill",
    "Turn",
]
