"""Any OpenAI-compatible ``/embeddings`` endpoint (OpenAI, vLLM, Ollama, llama.cpp server), via the official SDK.

The SDK's own retries are off: the callers hold budgets (two seconds for a note, the fill's
requests a minute) and decide themselves when a transient failure is tried again.
"""

from __future__ import annotations

import logging
import os
import threading

import openai

from core.providers.errors import ConfigurationError, RateLimitedError, RefusedError, TransientError

log = logging.getLogger("learning.embeddings")

NO_KEY = "no-key"  # self-hosted servers (vLLM, llama.cpp) take any bearer; the SDK insists on one
REFUSED_STATUSES = {400, 413, 422}  # the endpoint declined this input


class OpenAICompatEmbedder:
    def __init__(self, spec):
        self.spec = spec
        self.model = spec.model
        # unknown (None) until the first answer when no dimensions are configured
        self.dim: int | None = spec.dimensions or None
        self.max_input_chars = spec.max_input_chars
        self._client: openai.OpenAI | None = None
        self._lock = threading.Lock()

    def _api_key(self) -> str:
        if not self.spec.api_key_env:
            return NO_KEY
        key = os.environ.get(self.spec.api_key_env, "")
        if not key:
            raise ConfigurationError(f"providers.embeddings.api_key_env: ${self.spec.api_key_env} is not set")
        return key

    def client(self) -> openai.OpenAI:
        with self._lock:
            if self._client is None:
                self._client = openai.OpenAI(
                    api_key=self._api_key(),
                    base_url=self.spec.base_url or None,
                    timeout=self.spec.timeout_seconds,
                    max_retries=0,
                )
            return self._client

    def embed_batch(self, texts: list[str]) -> list[list[float]]:
        """One ``POST /embeddings`` for ``texts``; a vector per text, in order."""
        if not texts:
            return []
        extra = {"dimensions": self.spec.dimensions} if self.spec.dimensions else {}
        try:
            # "float", not the SDK's base64 default: not every compatible server speaks base64
            answer = self.client().embeddings.create(model=self.model, input=texts, encoding_format="float", **extra)
        except openai.APIError as exc:
            raise _typed(exc) from exc
        vectors = [item.embedding for item in sorted(answer.data, key=lambda d: d.index)]
        self._check_shape(vectors, len(texts))
        return vectors

    def _check_shape(self, vectors: list[list[float]], asked: int) -> None:
        if len(vectors) != asked:
            raise ConfigurationError(f"{self.spec.base_url or 'the endpoint'} answered {len(vectors)} vectors for {asked} inputs")
        widths = {len(v) for v in vectors}
        wanted = self.spec.dimensions
        if wanted and widths != {wanted}:
            got = ", ".join(str(w) for w in sorted(widths))
            raise ConfigurationError(f"providers.embeddings.dimensions is {wanted} but {self.model} answered width {got}")
        if self.dim is None and len(widths) == 1:
            self.dim = widths.pop()


def _typed(exc: openai.APIError) -> Exception:
    """The SDK's error as ours: whose fault it is decides whether anything retries it."""
    if isinstance(exc, openai.APITimeoutError):
        return TransientError(f"embeddings endpoint timed out: {exc}")
    if isinstance(exc, openai.APIConnectionError):
        return TransientError(f"embeddings endpoint unreachable: {exc}")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        message = f"embeddings endpoint answered {status}: {_message(exc)}"
        if status == 429:
            return RateLimitedError(message)
        if status >= 500:
            return TransientError(message)
        if status in REFUSED_STATUSES:
            return RefusedError(message)
        return ConfigurationError(message)  # 401, 403, 404 and any other 4xx: how we call it is wrong
    return ConfigurationError(f"embeddings endpoint answered something unreadable: {exc}")


def _message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return str(exc.message)
