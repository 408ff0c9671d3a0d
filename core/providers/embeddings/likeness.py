"""Whether anything stored is like a query at all: the cosine similarity from which a stored text counts as
like a query (``providers.embeddings.similar_from``), per embedding model.

A ranking always has a first row, even when every stored turn is far from the query (a baking question
asked of a help desk's seat).
How near is near enough is a property of the model's space, not of the fusion, so it is set per model.

For the packaged model the floor is 0.40: questions asked of the seat that holds their answers have a
nearest text at or above it, and the same questions asked of an unrelated seat fall below it. It was chosen
on one development set and confirmed on the other; ``bench/recall.py`` prints both ("nothing like it").
"""

from __future__ import annotations

from core.providers.embeddings.local import LOCAL_MODEL_ALIASES

# the model's own similar_from, by model name; a model not here is not judged unless configured
KNOWN_SIMILAR_FROM: dict[str, float] = {alias: 0.40 for alias in LOCAL_MODEL_ALIASES}


def similar_from(model: str, configured: float) -> float | None:
    """The similarity from which a stored text of ``model`` is like a query; None when it is not judged.

    ``configured`` is ``providers.embeddings.similar_from``: 0 takes the model's own, a negative value
    judges nothing."""
    if configured < 0:
        return None
    return configured if configured > 0 else KNOWN_SIMILAR_FROM.get(model)


def unlike(nearest: float | None, model: str, configured: float) -> bool:
    """True when the nearest stored text (its cosine distance, ``core.hybrid.Ranked.nearest``) is not like the
    query: its similarity below ``similar_from``. Nothing compared, or no floor known: not judged (False)."""
    floor = similar_from(model, configured)
    return floor is not None and nearest is not None and 1.0 - nearest < floor
