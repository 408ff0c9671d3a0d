"""The embedder seam (split and pool, unusable vectors, the budget, typed failures), the
OpenAI-compatible client against a local fake of the real wire format, and the packaged model."""

from __future__ import annotations

import json
import math
import threading
from pathlib import Path

import numpy as np
import pytest

from core.providers.embeddings import embed_many, embed_one, get_embedder
from core.providers.embeddings.base import pieces_of
from core.providers.embeddings.local import (
    CONTENT_WORD_PIECES,
    LOCAL_DIM,
    LOCAL_MAX_INPUT_CHARS,
    LocalEmbedder,
    _pieces_within_model_input,
    load_model,
)
from core.providers.embeddings.minilm_numpy import ONE_TEXT_ROWS
from core.providers.embeddings.openai_compat import OpenAICompatEmbedder
from core.providers.errors import ConfigurationError, RateLimitedError, RefusedError, TransientError
from core.vectors import pool
from crewlet.config import schema
from tests.fakes.openai_embeddings_server import DEFAULT_WIDTH, FakeEmbeddingsServer


class RecordingEmbedder:
    """Answers each text with a fixed-direction vector per first letter and records every batch."""

    model, dim = "recording-4", 4

    def __init__(self, max_input_chars=50, answer=None):
        self.max_input_chars = max_input_chars
        self.batches: list[list[str]] = []
        self._answer = answer

    def embed_batch(self, texts):
        self.batches.append(list(texts))
        if self._answer is not None:
            return [list(self._answer) for _ in texts]
        return [[float(len(t) % 5 + 1), float(ord(t[0]) % 7), 1.0, 0.0] for t in texts]


class BlockedEmbedder(RecordingEmbedder):
    """Does not answer until released: an embed that runs past its budget."""

    def __init__(self):
        super().__init__()
        self.release = threading.Event()

    def embed_batch(self, texts):
        self.release.wait(10)
        return super().embed_batch(texts)


class FailingEmbedder(RecordingEmbedder):
    def __init__(self, error):
        super().__init__()
        self.error = error

    def embed_batch(self, texts):
        raise self.error


LONG_TEXT = " ".join(f"word{i:03d}" for i in range(60))  # 479 characters, 60 words


# ---- the seam: split and pool -----------------------------------------------------------------


def test_a_long_text_is_split_between_words_into_pieces_within_the_input_size():
    embedder = RecordingEmbedder(max_input_chars=50)
    embed_one(LONG_TEXT, embedder=embedder)
    (pieces,) = embedder.batches
    assert len(pieces) > 1
    assert all(len(p) <= 50 for p in pieces)
    assert " ".join(pieces).split() == LONG_TEXT.split()  # every word whole, in order, none lost


def test_a_long_text_is_embedded_in_one_request_and_pooled_into_one_unit_vector():
    embedder = RecordingEmbedder(max_input_chars=50)
    result = embed_one(LONG_TEXT, embedder=embedder)
    assert len(embedder.batches) == 1
    pieces = embedder.batches[0]
    assert result.status == "embedded"
    assert math.isclose(np.linalg.norm(result.vector), 1.0, rel_tol=1e-9)
    expected = pool(embedder.embed_batch(pieces), [len(p) for p in pieces])
    np.testing.assert_allclose(result.vector, expected)


def test_several_texts_long_and_short_share_one_request():
    embedder = RecordingEmbedder(max_input_chars=50)
    results = embed_many(["short one", LONG_TEXT, "another"], embedder=embedder)
    assert len(embedder.batches) == 1
    assert [r.status for r in results] == ["embedded"] * 3
    assert embedder.batches[0][0] == "short one" and embedder.batches[0][-1] == "another"


def test_a_text_given_twice_is_embedded_once_and_each_answer_has_its_vector():
    embedder = RecordingEmbedder(max_input_chars=50)
    results = embed_many(["the billing export", LONG_TEXT, "the billing export", LONG_TEXT], embedder=embedder)
    (sent,) = embedder.batches
    assert sent.count("the billing export") == 1
    assert len(sent) == 1 + len(pieces_of(LONG_TEXT, 50))  # the long text's pieces once, not twice
    assert [r.status for r in results] == ["embedded"] * 4
    assert results[0].vector == results[2].vector and results[1].vector == results[3].vector
    assert results[0].vector is not results[2].vector  # a copy each: one caller's edit is not another's


def test_a_text_within_the_input_size_is_sent_whole():
    embedder = RecordingEmbedder(max_input_chars=50)
    embed_one("fits in one piece", embedder=embedder)
    assert embedder.batches == [["fits in one piece"]]


# ---- the seam: vectors with no direction ------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [[0.0, 0.0, 0.0, 0.0], [float("nan"), 1.0, 0.0, 0.0], [float("inf"), 1.0, 0.0, 0.0]],
    ids=["zero", "nan", "inf"],
)
def test_a_zero_or_non_finite_vector_counts_as_no_vector(answer):
    result = embed_one("a note", embedder=RecordingEmbedder(answer=answer))
    assert result.vector is None
    assert result.status == "unusable"


def test_a_long_text_whose_pieces_all_come_back_zero_has_no_vector():
    result = embed_one(LONG_TEXT, embedder=RecordingEmbedder(max_input_chars=50, answer=[0.0] * 4))
    assert (result.vector, result.status) == (None, "unusable")


# ---- the seam: the budget and failures --------------------------------------------------------


def test_an_embed_past_its_budget_returns_no_vector_with_status_timeout_instead_of_raising():
    embedder = BlockedEmbedder()
    try:
        result = embed_one("a note", budget=0.2, embedder=embedder)
    finally:
        embedder.release.set()
    assert result.vector is None
    assert result.status == "timeout"
    assert embedder.batches == []  # it gave up before the embedder answered


class GatedEmbedder(RecordingEmbedder):
    """Answers one batch per permit the test hands out: an embed that is slower than its budget."""

    def __init__(self):
        super().__init__(max_input_chars=50)
        self.permits = threading.Semaphore(0)

    def embed_batch(self, texts):
        self.permits.acquire(timeout=30)
        return super().embed_batch(texts)


def settled():
    """Every embed call the seam accepted has finished (each holds a pending slot until it does)."""
    from core.providers.embeddings import base

    taken = [base._pending.acquire(timeout=30) for _ in range(base.MAX_PENDING_CALLS)]
    for ok in taken:
        if ok:
            base._pending.release()
    return all(taken)


def test_an_embed_past_its_budget_sends_no_batch_after_the_one_in_flight():
    from core.providers.embeddings.base import BATCH_PIECES

    embedder = GatedEmbedder()
    text = " ".join(f"word{i:04d}" for i in range(400))  # about 80 pieces: several batches
    result = embed_one(text, budget=0.2, embedder=embedder)
    assert result.status == "timeout"
    embedder.permits.release(100)  # the batch in flight answers; nothing after it may be sent
    assert settled()
    # the batch in flight (if a worker had started it) answers; the other four are never sent
    assert len(embedder.batches) <= 1 and all(len(b) == BATCH_PIECES for b in embedder.batches)


def test_a_text_is_embedded_from_at_most_max_pieces_per_text_model_inputs():
    from core.providers.embeddings.base import MAX_PIECES_PER_TEXT

    embedder = RecordingEmbedder(max_input_chars=50)
    huge = " ".join(f"word{i:05d}" for i in range(20_000))  # ~2,900 pieces of 50 characters
    result = embed_one(huge, embedder=embedder, budget=30)
    assert result.status == "embedded"
    assert sum(len(b) for b in embedder.batches) == MAX_PIECES_PER_TEXT
    assert embedder.batches[0][0].startswith("word00000")


def test_a_call_that_gives_up_while_queued_is_cancelled_never_sent():
    from core.providers.embeddings.base import _pool

    embedder = GatedEmbedder()
    workers = _pool._max_workers
    results = [embed_one(f"note {i}", budget=0.05, embedder=embedder) for i in range(workers + 3)]
    embedder.permits.release(1000)
    assert settled()
    assert {r.status for r in results} == {"timeout"}
    # the calls a worker had started answer; the ones still queued when they gave up never reach the model
    assert len(embedder.batches) <= workers


@pytest.mark.parametrize(
    "error", [ConfigurationError("bad key"), RefusedError("too long"), TransientError("503"), RateLimitedError("429")]
)
def test_a_provider_error_returns_no_vector_with_status_failed(error):
    result = embed_one("a note", embedder=FailingEmbedder(error))
    assert result.vector is None
    assert result.status == "failed"
    assert result.error.startswith(error.kind)


def test_embeddings_switched_off_return_status_unconfigured(serve_config):
    serve_config(providers=schema.Providers(embeddings=schema.EmbeddingSpec(kind="none")))
    assert get_embedder() is None
    assert embed_one("a note").status == "unconfigured"


# ---- the OpenAI-compatible client against the fake endpoint ----------------------------------


@pytest.fixture
def fake_endpoint(monkeypatch):
    monkeypatch.setenv("FAKE_EMBED_KEY", "sk-test")
    with FakeEmbeddingsServer(api_key="sk-test") as server:
        yield server


def _remote(server, **spec):
    fields = dict(kind="openai_compat", model="text-embedding-3-small", base_url=server.base_url, api_key_env="FAKE_EMBED_KEY")
    fields.update(spec)
    return OpenAICompatEmbedder(schema.EmbeddingSpec(**fields))


def test_the_openai_client_sends_one_request_with_the_key_and_dimensions(fake_endpoint):
    embedder = _remote(fake_endpoint, dimensions=32)
    vectors = embedder.embed_batch(["alpha beta", "gamma"])
    assert [len(v) for v in vectors] == [32, 32]
    (body,) = fake_endpoint.requests
    assert body["input"] == ["alpha beta", "gamma"] and body["dimensions"] == 32
    assert body["model"] == "text-embedding-3-small"
    assert fake_endpoint.headers[0]["authorization"] == "Bearer sk-test"


def test_the_openai_client_omits_dimensions_when_unset_and_learns_the_width(fake_endpoint):
    embedder = _remote(fake_endpoint, model="some-local-model")
    assert embedder.dim is None  # unknown until the endpoint answers, never 0
    vectors = embedder.embed_batch(["alpha"])
    assert "dimensions" not in fake_endpoint.requests[0]
    assert embedder.dim == len(vectors[0])


@pytest.mark.parametrize(
    "status, error",
    [
        (401, ConfigurationError),
        (403, ConfigurationError),
        (404, ConfigurationError),
        (400, RefusedError),
        (429, RateLimitedError),
        (500, TransientError),
        (503, TransientError),
    ],
)
def test_the_endpoints_http_errors_map_to_typed_errors(fake_endpoint, status, error):
    fake_endpoint.fail(status)
    with pytest.raises(error) as raised:
        _remote(fake_endpoint).embed_batch(["alpha"])
    assert type(raised.value) is error
    assert str(status) in str(raised.value)


def test_a_wrong_key_is_a_configuration_error(fake_endpoint, monkeypatch):
    monkeypatch.setenv("FAKE_EMBED_KEY", "sk-wrong")
    with pytest.raises(ConfigurationError, match="401"):
        _remote(fake_endpoint).embed_batch(["alpha"])


def test_a_key_env_that_is_not_set_is_a_configuration_error(fake_endpoint, monkeypatch):
    monkeypatch.delenv("FAKE_EMBED_KEY")
    with pytest.raises(ConfigurationError, match="FAKE_EMBED_KEY"):
        _remote(fake_endpoint).embed_batch(["alpha"])
    assert fake_endpoint.requests == []


def test_a_stalled_endpoint_is_a_transient_error(fake_endpoint):
    fake_endpoint.stall(5)
    with pytest.raises(TransientError, match="timed out"):
        _remote(fake_endpoint, timeout_seconds=0.3).embed_batch(["alpha"])


def test_an_unreachable_endpoint_is_a_transient_error():
    with FakeEmbeddingsServer() as server:
        url = server.base_url
    embedder = OpenAICompatEmbedder(schema.EmbeddingSpec(kind="openai_compat", model="m", base_url=url))
    with pytest.raises(TransientError, match="unreachable"):
        embedder.embed_batch(["alpha"])


def test_a_width_other_than_the_configured_dimensions_is_a_configuration_error(fake_endpoint):
    fake_endpoint.width(17)
    with pytest.raises(ConfigurationError, match="dimensions is 32"):
        _remote(fake_endpoint, dimensions=32).embed_batch(["alpha"])


def test_zero_vectors_from_the_endpoint_are_stored_as_no_vector(fake_endpoint):
    fake_endpoint.zeros()
    result = embed_one("alpha", embedder=_remote(fake_endpoint))
    assert (result.vector, result.status) == (None, "unusable")


def test_an_endpoint_stalled_past_the_budget_gives_status_timeout(fake_endpoint):
    fake_endpoint.stall(5)
    result = embed_one("alpha", budget=0.3, embedder=_remote(fake_endpoint, timeout_seconds=10))
    assert (result.vector, result.status) == (None, "timeout")


def test_a_long_text_reaches_the_endpoint_as_pieces_in_one_request(fake_endpoint):
    result = embed_one(LONG_TEXT, embedder=_remote(fake_endpoint, max_input_chars=100))
    assert result.status == "embedded"
    (body,) = fake_endpoint.requests
    assert len(body["input"]) > 1 and all(len(p) <= 100 for p in body["input"])


def test_the_configured_openai_embedder_is_resolved_from_config(fake_endpoint, serve_config):
    spec = schema.EmbeddingSpec(
        kind="openai_compat", model="text-embedding-3-small", base_url=fake_endpoint.base_url, api_key_env="FAKE_EMBED_KEY"
    )
    serve_config(providers=schema.Providers(embeddings=spec))
    result = embed_one("alpha beta")
    assert result.status == "embedded" and result.model == "text-embedding-3-small"
    assert len(result.vector) == DEFAULT_WIDTH


# ---- the packaged local model -----------------------------------------------------------------


def test_the_local_embedder_refuses_a_model_it_does_not_ship():
    embedder = LocalEmbedder(schema.EmbeddingSpec(kind="local", model="bge-large"))
    result = embed_one("a note", embedder=embedder)
    assert result.status == "failed" and "bge-large" in result.error


def test_the_local_embedder_refuses_a_width_it_cannot_answer():
    embedder = LocalEmbedder(schema.EmbeddingSpec(kind="local", dimensions=768))
    with pytest.raises(ConfigurationError, match="384 wide"):
        embedder.embed_batch(["a note"])


def test_the_local_embedder_splits_within_what_the_model_reads():
    assert LocalEmbedder(schema.EmbeddingSpec(kind="local", max_input_chars=1000)).max_input_chars == LOCAL_MAX_INPUT_CHARS
    assert LocalEmbedder(schema.EmbeddingSpec(kind="local", max_input_chars=300)).max_input_chars == 300


def test_dense_text_past_the_models_word_pieces_is_split_rather_than_cut():
    from tokenizers import Tokenizer

    from core.providers.embeddings.local import model_dir

    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tokenizer.no_truncation()

    def word_pieces(text):
        return len(tokenizer.encode(text, add_special_tokens=False).ids)

    dense = " ".join(f"{i:08x}{i * 7919:08x}" for i in range(36))  # ~600 chars of hex, ~400 word pieces
    assert word_pieces(dense) > CONTENT_WORD_PIECES
    pieces = _pieces_within_model_input(word_pieces, dense)
    assert len(pieces) > 1
    assert all(word_pieces(p) <= CONTENT_WORD_PIECES for p in pieces)
    assert " ".join(pieces).split() == dense.split()


@pytest.fixture(scope="module")
def local_model():
    embedder = LocalEmbedder(schema.EmbeddingSpec(kind="local"))
    embedder.load()
    return embedder


@pytest.mark.real_model
def test_the_real_model_answers_384_wide_unit_vectors(local_model):
    result = embed_one("the deploy failed because the migration locked the table", budget=None, embedder=local_model)
    assert result.status == "embedded" and result.model == "all-MiniLM-L6-v2"
    assert len(result.vector) == LOCAL_DIM == local_model.dim
    assert math.isclose(np.linalg.norm(result.vector), 1.0, rel_tol=1e-5)


@pytest.mark.real_model
def test_the_real_model_puts_close_sentences_closer_than_unrelated_ones(local_model):
    a, b, c = (
        r.vector
        for r in embed_many(
            [
                "The build broke because a database migration timed out.",
                "CI failed: the schema migration hit a timeout.",
                "Our team lunch is on Friday at the Italian place.",
            ],
            budget=None,
            embedder=local_model,
        )
    )
    assert np.dot(a, b) > np.dot(a, c) + 0.2


@pytest.mark.real_model
def test_the_real_model_pools_a_5000_character_text_into_one_vector(local_model, monkeypatch):
    sentence = "When the payment service times out, retry the request once and page the on-call engineer. "
    text = (sentence * 60)[:5000]
    batches = []
    real_batch = local_model.embed_batch
    monkeypatch.setattr(local_model, "embed_batch", lambda texts: batches.append(texts) or real_batch(texts))

    result = embed_one(text, budget=None, embedder=local_model)

    assert len(batches) == 1 and len(batches[0]) >= 5000 // LOCAL_MAX_INPUT_CHARS
    assert result.status == "embedded" and len(result.vector) == LOCAL_DIM
    assert math.isclose(np.linalg.norm(result.vector), 1.0, rel_tol=1e-5)
    short = embed_one(sentence, budget=None, embedder=local_model).vector
    unrelated = embed_one("A recipe for lemon cake with poppy seeds.", budget=None, embedder=local_model).vector
    assert np.dot(result.vector, short) > 0.7
    assert np.dot(result.vector, short) > np.dot(result.vector, unrelated) + 0.3


REFERENCE = Path(__file__).parent / "fixtures" / "minilm_reference.json"


@pytest.mark.real_model
def test_the_real_model_gives_the_reference_pipelines_vectors(local_model):
    """Vectors sentence-transformers (torch) computed for the same model, stored by
    bin/minilm_reference_vectors.py: rows embedded before stay comparable with rows embedded now."""
    reference = json.loads(REFERENCE.read_text())
    assert reference["model"] == local_model.model
    texts = [item["text"] for item in reference["items"]]
    expected = np.array([item["vector"] for item in reference["items"]])

    got = load_model().encode(texts)

    cosines = (got * expected).sum(axis=1) / np.linalg.norm(got, axis=1) / np.linalg.norm(expected, axis=1)
    assert cosines.min() >= 0.9999, dict(zip(texts, cosines.round(6), strict=True))
    assert np.abs(got - expected).max() < 1e-4


@pytest.mark.real_model
def test_one_text_at_a_time_gives_the_reference_pipelines_vectors(local_model):
    """A single short text (a turn's ask) takes the model's unpadded small-product path: it must give
    the same vectors as the reference pipeline, as the batched path does."""
    reference = json.loads(REFERENCE.read_text())
    model = load_model()
    short = [item for item in reference["items"] if len(model.tokenizer.encode(item["text"]).ids) <= ONE_TEXT_ROWS]
    assert len(short) >= 5  # the path is exercised, not skipped

    for item in short:
        got = model.encode([item["text"]])[0]
        expected = np.array(item["vector"])
        cosine = float(got @ expected / np.linalg.norm(got) / np.linalg.norm(expected))
        assert cosine >= 0.9999, (item["text"], cosine)
        assert np.abs(got - expected).max() < 1e-4, item["text"]


def test_work_done_beside_an_embed_is_kept_only_for_the_width_it_was_done_for(db, monkeypatch):
    """``embed_one_beside`` hands ``meanwhile`` the model and width the embedder announces; an answer of
    another width drops what it made (a ranking of the wrong rows), and keeps the vector."""
    from core.providers.embeddings import embed_one_beside

    embedder = get_embedder()
    asked = []
    assert embed_one_beside("the billing export", lambda model, dim: asked.append((model, dim)) or "made")[1] == "made"
    assert asked == [(embedder.model, embedder.dim)]

    embed_batch = embedder.embed_batch
    monkeypatch.setattr(embedder, "embed_batch", lambda texts: [[*v, 0.5] for v in embed_batch(texts)])
    result, made = embed_one_beside("the billing export", lambda model, dim: "made")
    assert result.vector is not None and len(result.vector) == embedder.dim + 1
    assert made is None
