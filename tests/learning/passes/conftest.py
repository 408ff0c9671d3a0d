"""Fixtures for the background passes: a fake embedder that misbehaves on cue, aged rows."""

from __future__ import annotations

import hashlib
from collections import deque
from datetime import timedelta

import pytest
from django.utils import timezone

from core.providers.errors import RefusedError
from crewlet.config import schema
from learning.models import DiaryEntry, Episode


class FakeEmbedder:
    """Answers like an embeddings endpoint, and on cue refuses, times out, rate-limits or answers zeros.

    - a text containing ``refuse_marker`` makes the whole request refused (the provider's 400);
    - ``refuse_all`` refuses every request, the plain probe word included (a configuration refusal);
    - a text containing ``zero_marker`` is answered with an all-zero vector;
    - ``cue(exc, ...)`` makes the next requests raise those errors in turn (None = answer normally).
    """

    def __init__(self, *, dim: int = 8, max_input_chars: int = 1000, model: str = "fake-8"):
        self.dim, self.max_input_chars, self.model = dim, max_input_chars, model
        self.calls: list[list[str]] = []
        self.refuse_marker, self.zero_marker = "POISON", "ZERO"
        self.refuse_all = False
        self._cues: deque = deque()

    def cue(self, *errors) -> None:
        self._cues.extend(errors)

    def vector(self, text: str) -> list[float]:
        digest = hashlib.sha256(text.encode()).digest()
        return [(b - 127.5) / 127.5 for b in digest[: self.dim]]

    def embed_batch(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        if self._cues:
            error = self._cues.popleft()
            if error is not None:
                raise error
        if self.refuse_all or any(self.refuse_marker in t for t in texts):
            raise RefusedError("input refused by the provider")
        return [[0.0] * self.dim if self.zero_marker in t else self.vector(t) for t in texts]


@pytest.fixture
def fake_embedder():
    return FakeEmbedder()


@pytest.fixture
def fill_config(serve_config):
    """Serve embeddings knobs for the fill: ``fill_config(requests_per_minute=2, bytes_per_minute=100)``."""

    def _serve(**embedding):
        spec = dict(kind="hashing", model="fake-8", dimensions=8, requests_per_minute=16, bytes_per_minute=1_000_000)
        spec.update(embedding)
        llm = {"offline": schema.ProviderSpec(kind="offline"), "scripted": schema.ProviderSpec(kind="scripted")}
        return serve_config(providers=schema.Providers(llm=llm, embeddings=schema.EmbeddingSpec(**spec)))

    return _serve


@pytest.fixture
def now():
    return timezone.now()


def note(seat, content: str, *, now=None, kind=DiaryEntry.LONG, **fields) -> DiaryEntry:
    return DiaryEntry.objects.create(seat=seat, kind=kind, content=content, created_at=now or timezone.now(), **fields)


def episode(seat, *, age_days: float = 0, now=None, tools=("read", "edit", "test"), outcome="done", **fields) -> Episode:
    ended = (now or timezone.now()) - timedelta(days=age_days)
    defaults = dict(
        task_summary=f"Message from Ana: fix build {age_days}",
        plan_summary="Fixed the failing build and opened a PR.",
        tool_sequence=list(tools),
        review_outcome=outcome,
        started_at=ended - timedelta(minutes=5),
        ended_at=ended,
    )
    defaults.update(fields)
    return Episode.objects.create(seat=seat, **defaults)
