"""The embedder seam.

An ``Embedder`` turns a batch of texts (each within its input size) into vectors and raises the
typed provider errors. ``embed_one`` / ``embed_many`` are what callers use: they split a text
longer than the model's input between words, pool the pieces' vectors into one, treat a zero or
non-finite vector as no vector, and give up past a time budget with "no vector" instead of raising.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from core.providers import in_force
from core.providers.errors import ProviderError
from core.providers.kinds import EmbeddingKind
from core.vectors import pool, split_words, usable

log = logging.getLogger("learning.embeddings")

DIARY_EMBED_BUDGET = 2.0  # seconds: learning.DiaryEmbedBudget, a note is one short input
PREFETCH_EMBED_BUDGET = 2.0  # seconds: prefetch.EmbedBudget, "a turn starting"
# Ours: what one call may cost. A text is pooled from at most MAX_PIECES_PER_TEXT model inputs (its
# vector then stands for its opening, the content stays whole); pieces go to the model BATCH_PIECES
# at a time, and a call past its budget stops at the next batch instead of running on unseen.
MAX_PIECES_PER_TEXT = 32
BATCH_PIECES = 16
MAX_PENDING_CALLS = 16  # calls queued or running at once; past it a call is refused (status "busy")


class Embedder(Protocol):
    """An embedder; one that computes in this process (no network) also sets ``in_process = True``:
    a call of its that no pool worker has started may be run on the caller's thread instead."""

    model: str
    dim: int
    max_input_chars: int

    def embed_batch(self, texts: list[str]) -> list[list[float]]:
        """One request: a vector per text; raises ConfigurationError / RefusedError / TransientError."""


@dataclass(frozen=True)
class EmbedResult:
    vector: list[float] | None
    model: str
    status: str  # embedded | failed | unconfigured | unusable | timeout
    error: str = ""


KINDS: dict[EmbeddingKind, str] = {  # "none" builds no embedder
    "local": "core.providers.embeddings.local.LocalEmbedder",
    "openai_compat": "core.providers.embeddings.openai_compat.OpenAICompatEmbedder",
    "hashing": "core.providers.embeddings.hashing.HashingEmbedder",
}

_lock = threading.Lock()
_cached: tuple | None = None
_pool = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="embed")
_pending = threading.BoundedSemaphore(MAX_PENDING_CALLS)


T = TypeVar("T")


class _Cancelled(Exception):
    """The caller gave up (its budget ran out): the remaining batches are not sent."""


def get_embedder() -> Embedder | None:
    """The configured embedder (cached per spec), or None when embeddings are off."""
    global _cached
    spec = in_force.providers().embeddings
    if spec.kind == "none":
        return None
    with _lock:
        if _cached is None or _cached[0] != spec:
            path = KINDS.get(spec.kind)
            if path is None:
                raise ImproperlyConfigured(f"providers.embeddings.kind: unknown embedder kind {spec.kind!r}")
            _cached = (spec, import_string(path)(spec))
        return _cached[1]


def reset_embedder() -> None:
    global _cached
    with _lock:
        _cached = None


def pieces_of(text: str, max_chars: int) -> list[str]:
    text = text.strip()
    if len(text) <= max_chars:
        return [text] if text else []
    return split_words(text, max_chars)


def _embed_whole(embedder: Embedder, texts: list[str], cancel: threading.Event | None = None) -> list[list[float] | None]:
    """Embed each text whole: long ones are split (up to MAX_PIECES_PER_TEXT pieces) and pooled.

    A text given more than once is embedded once (each answer gets its own copy of the vector).
    """
    distinct = list(dict.fromkeys(texts))
    if len(distinct) < len(texts):
        by_text = dict(zip(distinct, _embed_distinct(embedder, distinct, cancel), strict=True))
        return [None if (v := by_text[t]) is None else list(v) for t in texts]
    return _embed_distinct(embedder, texts, cancel)


def _embed_distinct(embedder: Embedder, texts: list[str], cancel: threading.Event | None) -> list[list[float] | None]:
    plan: list[tuple[int, int, list[float]]] = []
    flat: list[str] = []
    for text in texts:
        pieces = pieces_of(text, embedder.max_input_chars)
        if len(pieces) > MAX_PIECES_PER_TEXT:
            log.info("a %d-character text is embedded from its first %d pieces", len(text), MAX_PIECES_PER_TEXT)
            pieces = pieces[:MAX_PIECES_PER_TEXT]
        plan.append((len(flat), len(pieces), [len(p) for p in pieces]))
        flat.extend(pieces)
    vectors = []
    for start in range(0, len(flat), BATCH_PIECES):
        if cancel is not None and cancel.is_set():
            raise _Cancelled()
        vectors.extend(embedder.embed_batch(flat[start : start + BATCH_PIECES]))
    out: list[list[float] | None] = []
    for start, n, weights in plan:
        if n == 0:
            out.append(None)
        elif n == 1:
            out.append(list(vectors[start]) if usable(vectors[start]) else None)
        else:
            out.append(pool(vectors[start : start + n], weights))
    return out


class PendingEmbed:
    """An embed already running on the embed pool (``begin_embed_many``): ``results()`` waits what is
    left of its budget, counted from when it was sent, and gives up past it as ``embed_many`` does."""

    def __init__(self, texts: list[str], *, model: str = "", budget: float | None = None, future=None, cancel=None,
                 done: list[EmbedResult] | None = None, embedder: Embedder | None = None):
        self._texts, self._model, self._budget = texts, model, budget
        self._future, self._cancel, self._done, self._embedder = future, cancel, done, embedder
        self._deadline = None if budget is None else time.monotonic() + budget
        dim = getattr(embedder, "dim", None)
        # the model and width the embedder announced when the embed was sent; None when it sent none, or
        # the width is not known before an answer
        self.shape: tuple[str, int] | None = None if future is None or not dim else (model, int(dim))

    def results(self, *, here_if_unstarted: bool = False) -> list[EmbedResult]:
        """The answer. ``here_if_unstarted``: an in-process embedder's call that no pool worker has
        picked up yet (a busy host wakes the worker late) is taken back and run on the caller's own
        thread, which would otherwise only wait for it -- and then wait again to be woken."""
        if self._done is None:
            if here_if_unstarted and getattr(self._embedder, "in_process", False) and self._future.cancel():
                self._done = self._run_here()
            else:
                self._done = self._collect()
        return self._done

    def _run_here(self) -> list[EmbedResult]:
        assert self._embedder is not None  # only an in-process embedder's call is run here
        try:
            vectors = _embed_whole(self._embedder, self._texts)
        except ProviderError as exc:
            return self._failed(exc)
        return self._answered(vectors)

    def _collect(self) -> list[EmbedResult]:
        model, n = self._model, len(self._texts)
        timeout = None if self._deadline is None else max(0.0, self._deadline - time.monotonic())
        try:
            vectors = self._future.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            self._cancel.set()
            self._future.cancel()
            log.warning("embed of %d text(s) ran past its %.1fs budget; stored without a vector", n, self._budget)
            return [EmbedResult(None, model, "timeout", "budget exceeded") for _ in range(n)]
        except ProviderError as exc:
            return self._failed(exc)
        return self._answered(vectors)

    def _failed(self, exc: ProviderError) -> list[EmbedResult]:
        log.warning("embed failed (%s): %s", exc.kind, exc)
        return [EmbedResult(None, self._model, "failed", f"{exc.kind}: {exc}") for _ in self._texts]

    def _answered(self, vectors) -> list[EmbedResult]:
        model = self._model
        return [EmbedResult(v, model, "embedded") if v is not None else EmbedResult(None, model, "unusable")
                for v in vectors]


def begin_embed_many(texts: list[str], *, budget: float | None = None, embedder: Embedder | None = None) -> PendingEmbed:
    """Send ``texts`` to the embed pool now and return at once: the caller does other work meanwhile
    and collects the answer with ``results()`` (what ``embed_many`` would have returned)."""
    texts = list(texts)
    if embedder is None:
        try:
            embedder = get_embedder()
        except (ImproperlyConfigured, ImportError) as exc:
            log.error("embedder could not be built: %s", exc)
            return PendingEmbed(texts, done=[EmbedResult(None, "", "failed", f"configuration: {exc}") for _ in texts])
    if embedder is None:
        return PendingEmbed(texts, done=[EmbedResult(None, "", "unconfigured") for _ in texts])
    from core.providers.embeddings import warm

    warm.wait_while_loading()  # a load in progress is not this embed's budget to spend
    if not _pending.acquire(timeout=budget):
        log.warning("embed of %d text(s) refused: %d calls already pending", len(texts), MAX_PENDING_CALLS)
        busy = [EmbedResult(None, embedder.model, "timeout", "busy: too many embeds pending") for _ in texts]
        return PendingEmbed(texts, done=busy)
    cancel = threading.Event()
    future = _pool.submit(_embed_whole, embedder, texts, cancel)
    future.add_done_callback(lambda _f: _pending.release())
    return PendingEmbed(texts, model=embedder.model, budget=budget, future=future, cancel=cancel, embedder=embedder)


def begin_embed_one(text: str, *, budget: float | None = DIARY_EMBED_BUDGET, embedder: Embedder | None = None) -> PendingEmbed:
    return begin_embed_many([text], budget=budget, embedder=embedder)


def embed_one_beside(text: str, meanwhile: Callable[[str, int], T], *, budget: float | None = DIARY_EMBED_BUDGET,
                     embedder: Embedder | None = None) -> tuple[EmbedResult, T | None]:
    """``embed_one``, with ``meanwhile(model, width)`` run on this thread while the text embeds (a search's
    ranking by words needs the vector's model and width, not the vector). Its result comes back only when
    the vector did, of that model and width; None otherwise, and when the width is not known before an
    answer (``meanwhile`` is not run then)."""
    pending = begin_embed_one(text, budget=budget, embedder=embedder)
    shape = pending.shape
    made = meanwhile(*shape) if shape is not None else None
    result = pending.results(here_if_unstarted=True)[0]
    if result.vector is None or shape != (result.model, len(result.vector)):
        made = None
    return result, made


def embed_many(texts: list[str], *, budget: float | None = None, embedder: Embedder | None = None) -> list[EmbedResult]:
    return begin_embed_many(texts, budget=budget, embedder=embedder).results()


def embed_one(text: str, *, budget: float | None = DIARY_EMBED_BUDGET, embedder: Embedder | None = None) -> EmbedResult:
    return embed_many([text], budget=budget, embedder=embedder)[0]
