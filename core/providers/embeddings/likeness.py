"""Whether anything stored is like a query at all: the cosine similarity from which a stored text counts as
like a query (``providers.embeddings.similar_from``), per embedding model.

A ranking always has a first row: min-max normalised, the nearest of a seat's turns scores high even when
every one of them is far from the query ("What's a good recipe for banana bread?" asked of an airline desk).
How near is near enough is a property of the model's space, not of the fusion, so it is set per model.

Measured for all-MiniLM-L6-v2 on the dev data (a lab over bench/recall.py's seats: the 100 tau-bench openings,
each trial in turn, and the 302 LoCoMo questions, asked of their own seats and again of the other set's seats,
where nothing is like them; ``bench/recall.py`` prints the same for its 25 + 302 queries): the nearest text's
similarity was at least 0.46 for 398 of the 402 questions asked of their own seats, and below 0.46 for every
one of the 402 asked of the other set's seats (398 of them below 0.40). From 0.40, 3 of the 402 were
judged unlike (two of them LoCoMo's adversarial questions, about a dog's bone and a notepad nobody mentioned),
and 4 of the 402 asked elsewhere were not (openings about changing a flight or a trip, asked of LoCoMo's
conversations, which talk of trips).
"""

from __future__ import annotations

from core.providers.embeddings.local import LOCAL_MODEL_ALIASES

# the model's own similar_from, by model name; a model not here is not judged unless configured
KNOWN_SIMILAR_FROM: dict[str, float] = {alias: 0.40 for alias in LOCAL_MODEL_ALIASES}


def similar_from(model: str) -> float | None:
    """The similarity from which a stored text of ``model`` is like a query; None when it is not judged."""
    from crewlet import config

    configured = config.current().providers.embeddings.similar_from
    if configured < 0:
        return None
    return configured if configured > 0 else KNOWN_SIMILAR_FROM.get(model)


def unlike(nearest: float | None, model: str) -> bool:
    """True when the nearest stored text (its cosine distance, ``core.hybrid.Ranked.nearest``) is not like the
    query: its similarity below ``similar_from``. Nothing compared, or no floor known: not judged (False)."""
    floor = similar_from(model)
    return floor is not None and nearest is not None and 1.0 - nearest < floor
