import pytest

from core.models import Event
from core.providers.embeddings import base as embed_base
from learning.prefetch import PrefetchRequest, prefetch


@pytest.fixture
def run(seat):
    """Run a prefetch for ``seat``: ``run(ask=..., requires_recon=..., run_id=...)``."""
    counter = {"n": 0}

    def _run(*, target=None, **fields):
        counter["n"] += 1
        fields.setdefault("run_id", f"run-{counter['n']}")
        return prefetch(seat=target or seat, request=PrefetchRequest(**fields))

    return _run


@pytest.fixture
def embed_calls(monkeypatch):
    """Counts every embedder request the code under test makes."""
    calls = []
    original = embed_base._embed_whole

    def counting(embedder, texts, *rest):
        calls.append(list(texts))
        return original(embedder, texts, *rest)

    monkeypatch.setattr(embed_base, "_embed_whole", counting)
    return calls


def aux_spend(turn_id=None, purpose=None):
    qs = Event.objects.filter(name="auxiliary_spend")
    if turn_id:
        qs = qs.filter(turn_id=turn_id)
    if purpose:
        qs = qs.filter(payload__purpose=purpose)
    return qs.count()


def block(result, name):
    return next(b for b in result["blocks"] if b["name"] == name)
