"""Published lessons into the eight artifact tiers, in batches, with their scopes normalised.

Scope normalisation runs before anything is created, so "migration guard" and "the migration
guards" make one recommendation. A lesson is classified once (its tier and scope are stored), so
re-running the loop classifies only what is new.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from django.utils import timezone

from core import auxiliary
from core.providers.errors import ProviderError
from core.purposes import AnswerUnparseable
from crewlet import config
from learning.purposes import artifact_classify
from learning.transcripts.models import Shard

if TYPE_CHECKING:
    from crewlet.models import Seat

CREATES = ("hook", "skill", "agent")  # tiers that create a new private file; the rest edit a shared one
_DETERMINERS = {"the", "a", "an", "our", "this", "that", "these", "those", "its", "their", "my", "your"}
_NON_WORD = re.compile(r"[^a-z0-9]+")


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def normalise_scope(scope: str) -> str:
    """Lower case, punctuation out, determiners out, plurals singular: one key per subject."""
    words = [w for w in _NON_WORD.split(scope.lower()) if w and w not in _DETERMINERS]
    return " ".join(_singular(w) for w in words)


def batches(items: list, size: int) -> list[list]:
    size = max(1, size)
    return [items[i : i + size] for i in range(0, len(items), size)]


def classify(*, seat: Seat, shards: list[Shard], warnings: list[str], stage: str = "background") -> int:
    """Classify the unclassified published ``shards`` in batches of ``classify_batch_size``; returns how many."""
    todo = [s for s in shards if s.status == Shard.PUBLISHED and s.classified_at is None]
    done = 0
    for batch in batches(todo, config.current().transcripts.classify_batch_size):
        lessons = [{"id": s.pk, "text": s.text} for s in batch]
        try:
            answer = auxiliary.call(seat=seat, stage=stage, purpose=artifact_classify.NAME,
                                    inputs=artifact_classify.Inputs(lessons=lessons))
        except (ProviderError, AnswerUnparseable) as exc:
            warnings.append(f"classification of {len(batch)} lesson(s) failed ({exc}); retried next run")
            continue
        classified: dict[int, artifact_classify.Classification] = answer.value
        now = timezone.now()
        for shard in batch:
            item = classified.get(shard.pk)
            if item is None:
                warnings.append(f"shard {shard.pk}: the classifier gave no tier; retried next run")
                continue
            shard.tier, shard.scope = item.tier, item.scope[:200]
            shard.scope_key = normalise_scope(item.scope)[:200] or f"shard {shard.pk}"
            shard.classified_at = now
            shard.save(update_fields=["tier", "scope", "scope_key", "classified_at"])
            done += 1
    return done
