"""all-MiniLM-L6-v2's forward pass in numpy: the packaged weights, no torch.

The model is a 6-layer BERT (hidden 384, 12 heads, GELU feed-forward of 1536) followed by mean
pooling over the real tokens and L2 normalisation -- the three modules its ``modules.json`` lists.
The weights are read from the package's ``model.safetensors`` and the word pieces come from its
``tokenizer.json`` through the ``tokenizers`` library, so this is the same model as the
sentence-transformers pipeline, run by a different engine: ``tests/core/providers`` holds
vectors that pipeline computed and checks this one against them (cosine >= 0.9999).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

LAYERS = 6
HEADS = 12
HIDDEN = 384
LAYER_NORM_EPS = 1e-12
MAX_WORD_PIECES = 256  # sentence_bert_config.json: max_seq_length
_FLOAT = np.float32


# Abramowitz & Stegun 7.1.26: erf(z) = 1 - t(a1 + t(a2 + ...)) exp(-z^2), t = 1 / (1 + p z), z >= 0,
# absolute error below 1.5e-7 -- under float32's own rounding of the values it feeds.
_ERF_P = 0.3275911
_ERF_A = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact (erf) GELU, x * Phi(x), in place on ``x`` (float32); numpy has no erf."""
    z = np.abs(x) * _FLOAT(1.0 / math.sqrt(2.0))
    t = z * _FLOAT(_ERF_P)
    t += 1.0
    np.reciprocal(t, out=t)
    poly = np.full_like(t, _ERF_A[0])
    for a in _ERF_A[1:]:
        poly *= t
        poly += a
    poly *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z  # erfc(|x| / sqrt 2)
    # Phi(x) = 1 - erfc/2 for x >= 0, erfc/2 for x < 0
    poly *= 0.5
    half = np.where(x >= 0, 1.0 - poly, poly)
    x *= half
    return x


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(var + LAYER_NORM_EPS) * weight + bias


def _check_config(model_dir: Path) -> None:
    """Refuse a directory that is not this architecture rather than compute something else."""
    config = json.loads((model_dir / "config.json").read_text())
    expected = {"hidden_size": HIDDEN, "num_attention_heads": HEADS, "num_hidden_layers": LAYERS, "hidden_act": "gelu"}
    wrong = {k: config.get(k) for k, v in expected.items() if config.get(k) != v}
    if wrong:
        raise ValueError(f"{model_dir}/config.json is not all-MiniLM-L6-v2's architecture: {wrong}")
    pooling = json.loads((model_dir / "1_Pooling" / "config.json").read_text())
    if not pooling.get("pooling_mode_mean_tokens"):
        raise ValueError(f"{model_dir}/1_Pooling/config.json: expected mean pooling")


class MiniLM:
    """The loaded model: ``word_pieces(text)`` and ``encode(texts)``."""

    def __init__(self, model_dir: Path):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        model_dir = Path(model_dir)
        _check_config(model_dir)
        # two copies of the word-piece tokenizer: one counts (no cut), the other feeds the model, which
        # reads the first 256 word pieces as the reference pipeline does
        self._counter = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._counter.no_truncation()
        self._counter.no_padding()
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_WORD_PIECES)
        self.tokenizer.no_padding()
        w = load_file(str(model_dir / "model.safetensors"))
        self._word = w["embeddings.word_embeddings.weight"]
        self._position = w["embeddings.position_embeddings.weight"]
        self._token_type = w["embeddings.token_type_embeddings.weight"][0]
        self._emb_ln = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self._layers = []
        for i in range(LAYERS):
            p = f"encoder.layer.{i}."
            # query, key and value as one (384, 1152) matrix: one matmul instead of three
            qkv = np.concatenate(
                [w[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value")], axis=0
            ).T.copy()
            qkv_bias = np.concatenate([w[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")])
            self._layers.append(
                (
                    qkv,
                    qkv_bias,
                    w[p + "attention.output.dense.weight"].T.copy(),
                    w[p + "attention.output.dense.bias"],
                    (w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"]),
                    w[p + "intermediate.dense.weight"].T.copy(),
                    w[p + "intermediate.dense.bias"],
                    w[p + "output.dense.weight"].T.copy(),
                    w[p + "output.dense.bias"],
                    (w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]),
                )
            )

    def word_pieces(self, text: str) -> int:
        """How many word pieces ``text`` is, without [CLS]/[SEP]."""
        return len(self._counter.encode(text, add_special_tokens=False).ids)

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        """A unit vector per text, (len(texts), 384) float32; batches are formed by length."""
        encodings = self.tokenizer.encode_batch(list(texts))
        out = np.zeros((len(texts), HIDDEN), dtype=_FLOAT)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            out[chunk] = self._forward([encodings[i].ids for i in chunk])
        return out

    def _forward(self, batch_ids: list[list[int]]) -> np.ndarray:
        batch, length = len(batch_ids), max(len(ids) for ids in batch_ids)
        ids = np.zeros((batch, length), dtype=np.int64)
        mask = np.zeros((batch, length), dtype=_FLOAT)
        for row, piece_ids in enumerate(batch_ids):
            ids[row, : len(piece_ids)] = piece_ids
            mask[row, : len(piece_ids)] = 1.0
        x = self._word[ids] + self._position[:length] + self._token_type
        x = _layer_norm(x, *self._emb_ln)
        # padded keys get the most negative float, as the reference implementation does
        key_bias = ((1.0 - mask) * np.finfo(_FLOAT).min)[:, None, None, :]
        head = HIDDEN // HEADS
        scale = _FLOAT(1.0 / math.sqrt(head))
        # the dense layers see every token of the batch as one (batch * length, 384) matrix: one matrix
        # product a weight instead of one a text; only the attention needs the texts apart
        x = x.reshape(batch * length, HIDDEN)
        for qkv, qkv_b, out_w, out_b, ln1, in_w, in_b, ff_w, ff_b, ln2 in self._layers:
            h = (x @ qkv + qkv_b).reshape(batch, length, 3, HEADS, head).transpose(2, 0, 3, 1, 4)
            q, k, v = h[0], h[1], h[2]
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale + key_bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * length, HIDDEN)
            x = _layer_norm(context @ out_w + out_b + x, *ln1)
            x = _layer_norm(_gelu(x @ in_w + in_b) @ ff_w + ff_b + x, *ln2)
        x = x.reshape(batch, length, HIDDEN)
        summed = (x * mask[:, :, None]).sum(axis=1)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)
