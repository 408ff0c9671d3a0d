"""all-MiniLM-L6-v2's forward pass in numpy: the packaged weights, no torch.

The model is a 6-layer BERT (hidden 384, 12 heads, GELU feed-forward of 1536) followed by mean
pooling over the real tokens and L2 normalisation -- the three modules its ``modules.json`` lists.
The weights are read from the package's ``model.safetensors`` and the word pieces come from its
``tokenizer.json`` through the ``tokenizers`` library, so this is the same model as the
sentence-transformers pipeline, run by a different engine: ``tests/core/providers`` holds
vectors that pipeline computed and checks this one against them (cosine >= 0.9999), batched and
one text at a time.

Two paths compute the same function:

- **A batch** (``_forward_batch``): every token of the batch is one row of a (rows, 384) matrix, one
  matrix product a weight; texts of unequal length are padded and masked.
- **One short text** (``_forward_one``, at most ``ONE_TEXT_ROWS`` word pieces: a turn's ask, a short
  note): no padding, no mask, and every product cut into column blocks small enough for OpenBLAS's
  small-matrix kernels (``M*N*K <= 1e6``), which skip the copying ("packing") of the weight that its
  general kernel does on every call; at a short text's few rows that copy is a large part of a
  product. Each weight is also kept as contiguous column blocks (query/key/value in blocks of 32, one
  a head, so the product comes out in the attention's layout): 42 MB beside the 42 MB of the layers'
  weights, which the batch path keeps using (past a few dozen rows, blocks are slower).
  ``bench/prefetch_latency.py`` times one ask's embed alone.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

LAYERS = 6
HEADS = 12
HIDDEN = 384
HEAD = HIDDEN // HEADS
FEED_FORWARD = 1536
LAYER_NORM_EPS = 1e-12
MAX_WORD_PIECES = 256  # sentence_bert_config.json: max_seq_length
# word pieces ([CLS]/[SEP] included) up to which one text takes the small-product path: at 40 rows every
# block product is still within M*N*K <= 1e6 (40 x 384 x 64 and 40 x 64 x 384 = 983,040)
ONE_TEXT_ROWS = 40
# column-block widths of the one-text path: 40 rows x 384 x 64 and 40 x 1536 x 16 are both <= 1e6
BLOCK = 64  # the attention's output weight and the first feed-forward weight
FF_OUT_BLOCK = 16  # the second feed-forward weight (1536 rows)
_FLOAT = np.float32


# Abramowitz & Stegun 7.1.26: erfc(z) = t(a1 + t(a2 + ...)) exp(-z^2), t = 1 / (1 + p z), z >= 0,
# absolute error below 1.5e-7 -- under float32's own rounding of the values it feeds.
_ERF_P = 0.3275911
_ERF_A = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)  # a5 .. a1
# GELU(x) = x Phi(x) = max(x, 0) - |x| Phi(-|x|), and Phi(-|x|) = erfc(|x| / sqrt 2) / 2: the halving
# and the 1/sqrt 2 are folded into the constants, so no branch and no select
_GELU_P = _FLOAT(_ERF_P / math.sqrt(2.0))
_GELU_A = tuple(_FLOAT(0.5 * a) for a in _ERF_A)


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact (erf) GELU, x * Phi(x), in place on ``x`` (float32); numpy has no erf."""
    a = np.abs(x)
    t = a * _GELU_P
    t += _FLOAT(1.0)
    np.reciprocal(t, out=t)
    tail = t * _GELU_A[0]
    for coefficient in _GELU_A[1:]:
        tail += coefficient
        tail *= t
    e = a * a
    e *= _FLOAT(-0.5)
    np.exp(e, out=e)
    tail *= e
    tail *= a  # |x| Phi(-|x|)
    np.maximum(x, _FLOAT(0.0), out=x)
    x -= tail
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


def _column_blocks(weight: np.ndarray, width: int) -> np.ndarray:
    """(in, out) -> (out / width, in, width), each block contiguous: ``x @ blocks`` is ``x @ weight``
    with its columns in blocks."""
    rows, cols = weight.shape
    return np.ascontiguousarray(weight.reshape(rows, cols // width, width).transpose(1, 0, 2))


def _joined(blocks: np.ndarray) -> np.ndarray:
    """(blocks, rows, width) -> (rows, blocks * width): the column blocks side by side again."""
    count, rows, width = blocks.shape
    return blocks.transpose(1, 0, 2).reshape(rows, count * width)


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
        self._one_text_layers = []
        for i in range(LAYERS):
            p = f"encoder.layer.{i}."
            # query, key and value as one (384, 1152) matrix: one matmul instead of three
            qkv = np.concatenate(
                [w[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value")], axis=0
            ).T.copy()
            qkv_bias = np.concatenate([w[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")])
            out_w, out_b = w[p + "attention.output.dense.weight"].T.copy(), w[p + "attention.output.dense.bias"]
            ln1 = (w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
            in_w, in_b = w[p + "intermediate.dense.weight"].T.copy(), w[p + "intermediate.dense.bias"]
            ff_w, ff_b = w[p + "output.dense.weight"].T.copy(), w[p + "output.dense.bias"]
            ln2 = (w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
            self._layers.append((qkv, qkv_bias, out_w, out_b, ln1, in_w, in_b, ff_w, ff_b, ln2))
            self._one_text_layers.append(
                (
                    _column_blocks(qkv, HEAD),  # (36, 384, 32): q, k, v of head 0..11
                    qkv_bias.reshape(3 * HEADS, 1, HEAD),
                    _column_blocks(out_w, BLOCK),  # (6, 384, 64)
                    out_b,
                    ln1,
                    _column_blocks(in_w, BLOCK),  # (24, 384, 64)
                    in_b.reshape(FEED_FORWARD // BLOCK, 1, BLOCK),
                    _column_blocks(ff_w, FF_OUT_BLOCK),  # (24, 1536, 16)
                    ff_b,
                    ln2,
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
        if len(batch_ids) == 1 and len(batch_ids[0]) <= ONE_TEXT_ROWS:
            return self._forward_one(batch_ids[0])[None, :]
        return self._forward_batch(batch_ids)

    def _embed(self, ids: np.ndarray, length: int) -> np.ndarray:
        return _layer_norm(self._word[ids] + self._position[:length] + self._token_type, *self._emb_ln)

    def _forward_one(self, piece_ids: list[int]) -> np.ndarray:
        """One text's unit vector, (384,): no padding, small products (see the module's docstring)."""
        length = len(piece_ids)
        x = self._embed(np.asarray(piece_ids, dtype=np.int64), length)  # (length, 384)
        scale = _FLOAT(1.0 / math.sqrt(HEAD))
        for qkv, qkv_b, out_w, out_b, ln1, in_w, in_b, ff_w, ff_b, ln2 in self._one_text_layers:
            h = np.matmul(x, qkv)  # (36, length, 32)
            h += qkv_b
            q, k, v = h[:HEADS], h[HEADS : 2 * HEADS], h[2 * HEADS :]
            scores = np.matmul(q, k.transpose(0, 2, 1))
            scores *= scale
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            attended = _joined(np.matmul(_joined(np.matmul(scores, v)), out_w))
            attended += out_b
            attended += x
            x = _layer_norm(attended, *ln1)
            inner = np.matmul(x, in_w)  # (24, length, 64)
            inner += in_b
            fed = _joined(np.matmul(_joined(_gelu(inner)), ff_w))
            fed += ff_b
            fed += x
            x = _layer_norm(fed, *ln2)
        pooled = x.mean(axis=0)
        return pooled / max(float(np.linalg.norm(pooled)), 1e-12)

    def _forward_batch(self, batch_ids: list[list[int]]) -> np.ndarray:
        batch, length = len(batch_ids), max(len(ids) for ids in batch_ids)
        ids = np.zeros((batch, length), dtype=np.int64)
        mask = np.zeros((batch, length), dtype=_FLOAT)
        for row, piece_ids in enumerate(batch_ids):
            ids[row, : len(piece_ids)] = piece_ids
            mask[row, : len(piece_ids)] = 1.0
        x = self._embed(ids, length)
        # padded keys get the most negative float, as the reference implementation does
        key_bias = ((1.0 - mask) * np.finfo(_FLOAT).min)[:, None, None, :]
        scale = _FLOAT(1.0 / math.sqrt(HEAD))
        # the dense layers see every token of the batch as one (batch * length, 384) matrix: one matrix
        # product a weight instead of one a text; only the attention needs the texts apart
        x = x.reshape(batch * length, HIDDEN)
        for qkv, qkv_b, out_w, out_b, ln1, in_w, in_b, ff_w, ff_b, ln2 in self._layers:
            h = (x @ qkv + qkv_b).reshape(batch, length, 3, HEADS, HEAD).transpose(2, 0, 3, 1, 4)
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
