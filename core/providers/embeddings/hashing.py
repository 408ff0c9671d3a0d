"""A deterministic feature-hashing embedder: fast, dependency-free, for unit tests and fallbacks.

Words and character trigrams are hashed (blake2b, stable across processes) into a fixed width
and L2-normalised, so texts sharing words land near each other. Not a semantic model.
"""

from __future__ import annotations

import hashlib
import math
import re

_WORD = re.compile(r"[a-z0-9]+")


class HashingEmbedder:
    in_process = True  # see ``PendingEmbed.results``

    def __init__(self, spec):
        self.dim = spec.dimensions or 256
        self.model = f"hashing-{self.dim}"
        self.max_input_chars = spec.max_input_chars or 1000

    def _index(self, token: str) -> tuple[int, float]:
        digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        return value % self.dim, 1.0 if (value >> 63) & 1 else -1.0

    def embed_one(self, text: str) -> list[float]:
        vec = [0.0] * self.dim
        words = _WORD.findall(text.lower())
        for word in words:
            i, sign = self._index("w:" + word)
            vec[i] += 2.0 * sign
            padded = f"#{word}#"
            for j in range(len(padded) - 2):
                i, sign = self._index("t:" + padded[j : j + 3])
                vec[i] += sign
        norm = math.sqrt(sum(x * x for x in vec))
        return [x / norm for x in vec] if norm else vec

    def embed_batch(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_one(t) for t in texts]
