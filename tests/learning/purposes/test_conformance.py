"""The conformance corpus: every purpose's real parser on realistic answers of every model family,
and a truncated answer through the real provider and the seam, charged and never parsed."""

from __future__ import annotations

import pytest

from core import auxiliary, purposes
from core.models import Event
from core.providers.errors import TruncatedError
from crewlet.config import schema
from tests.core.providers.helpers import OPENAI_KEY, OPENAI_KEY_ENV, openai_spec
from tests.fakes.openai_server import FakeOpenAIServer
from tests.learning.purposes.corpus import CORPUS, IDEAL, UNPARSEABLE

CASES = [(name, case) for name, cases in CORPUS.items() for case in cases]


def test_the_corpus_covers_every_listed_purpose_in_the_styles_that_apply():
    assert set(CORPUS) == set(purposes.all_purposes()) == set(IDEAL)
    for name, cases in CORPUS.items():
        styles = {case.style for case in cases}
        assert "openai" in styles and "truncated" in styles, name
    assert {case.style for case in sum(CORPUS.values(), [])} >= {"openai", "anthropic", "local", "reasoning", "noop"}


@pytest.mark.parametrize(("name", "case"), CASES, ids=[f"{n}-{i}-{c.style}" for i, (n, c) in enumerate(CASES)])
def test_each_answer_gets_the_expected_outcome_from_the_real_parser(name, case):
    purpose = purposes.get(name)
    if case.expect == UNPARSEABLE:
        with pytest.raises(purposes.AnswerUnparseable) as caught:
            purpose.parse(case.text)
        assert caught.value.purpose == name
        return
    value = purpose.parse(case.text)
    assert case.expect(value), f"{name} parsed {case.text!r} as {value!r}"


@pytest.fixture
def length_server(serve_config, seat, monkeypatch):
    """The seat's only auxiliary model: a fake OpenAI-compatible server that cuts every answer off."""
    monkeypatch.setenv(OPENAI_KEY_ENV, OPENAI_KEY)
    with FakeOpenAIServer(mode="length", responder=lambda body: "") as server:
        server.api_key = OPENAI_KEY
        llm = {"cut": openai_spec(server)}
        serve_config(providers=schema.Providers(llm=llm, embeddings=schema.EmbeddingSpec(kind="hashing", dimensions=256)))
        seat.role.llm_auxiliary = ["cut"]
        seat.role.save()
        yield server


@pytest.mark.parametrize("name", sorted(IDEAL))
def test_a_truncated_answer_is_a_truncation_charged_and_never_parsed(length_server, seat, name):
    length_server.responder = lambda body: IDEAL[name]
    from learning.purposes.probe import PROBE_INPUTS

    with pytest.raises(TruncatedError):
        auxiliary.call(seat=seat, stage="operator", purpose=name, inputs=PROBE_INPUTS[name])

    (row,) = Event.objects.filter(name="auxiliary_spend")
    assert (row.payload["outcome"], row.payload["finish"], row.payload["purpose"]) == ("truncated", "length", name)
    assert row.payload["output_tokens"] > 0
