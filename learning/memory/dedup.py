"""Duplicates refused in code: a note that says what a live note of the seat already says.

Two notes say the same when their words match once normalised (case, punctuation and spacing
aside), or when their vectors (of one model) are at least ``duplicate_similarity`` alike
(``learning.personal_memory.duplicate_similarity``). A model asked not to repeat a recent note
still does; this is the check that holds.
"""

from __future__ import annotations

from django.db.models import Func, TextField, Value
from django.db.models.functions import Lower, Trim

from core.answers import normalised
from core.vectors import ranked_ids
from learning.memory import diary
from learning.models import DiaryEntry


def _normalised_sql():
    """``core.answers.normalised`` in SQL: lower-cased, every run of non-alphanumerics one space."""
    return Trim(Func(Lower("content"), Value(r"[^[:alnum:]]+"), Value(" "), Value("g"), function="regexp_replace",
                     output_field=TextField()))


def duplicate_of(entry: DiaryEntry, *, similarity: float, now=None) -> int | None:
    """The id of a live note of ``entry``'s seat that says the same, or None."""
    live = diary.live(entry.seat, now)
    same = live.annotate(words=_normalised_sql()).filter(words=normalised(entry.content)).values_list("id", flat=True)
    found = same.first()
    if found is not None:
        return found
    if entry.embedding is None or similarity <= 0:
        return None
    nearest = ranked_ids(live, entry.embedding, entry.embedding_model, limit=1, max_distance=1.0 - similarity)
    return nearest[0][0] if nearest else None
