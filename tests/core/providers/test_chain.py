"""Chain fall-through through ``auxiliary.call``: the next alias answers a transient or configuration
failure; a refusal is sent to no other model. A background call raises what the last alias raised."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict

from core import auxiliary, purposes
from core.models import BudgetCounter, Event
from core.providers.errors import ConfigurationError, RefusedError, TransientError
from crewlet.config import schema
from tests.core.providers.helpers import OPENAI_KEY_ENV, anthropic_spec, openai_spec


class Worded(BaseModel):
    model_config = ConfigDict(extra="forbid")

    word: str = ""


CHAIN_PURPOSE = purposes.register(
    purposes.Purpose(
        name="test_providers_chain_echo",
        inputs=Worded,
        render=lambda inputs: purposes.system_user("Repeat the word.", inputs.word),
        parse=lambda text: text.strip(),
        offline=lambda inputs: inputs.word,
        max_tokens=32,
    )
)


@pytest.fixture
def chain(serve_config, openai_server, anthropic_server, seat):
    """The seat's auxiliary chain: ``primary`` (the OpenAI fake), then ``secondary`` (the Anthropic fake)."""
    llm = {"primary": openai_spec(openai_server, max_retries=0), "secondary": anthropic_spec(anthropic_server, max_retries=0)}
    serve_config(providers=schema.Providers(llm=llm, embeddings=schema.EmbeddingSpec(kind="hashing", dimensions=256)))
    seat.role.llm_auxiliary = ["primary", "secondary"]
    seat.role.save()
    return openai_server, anthropic_server


def ask(seat, stage="reflection"):
    return auxiliary.call(seat=seat, stage=stage, purpose=CHAIN_PURPOSE.name, turn_id="t-1", inputs={"word": "kiwi"})


def spend_events():
    return list(Event.objects.filter(name="auxiliary_spend").order_by("id"))


def outcomes():
    return [(e.payload["provider"], e.payload["outcome"]) for e in spend_events()]


@pytest.mark.parametrize("status", [500, 503, 429, 401, 403, 404])
def test_a_transient_or_configuration_failure_falls_through_to_the_next_alias(chain, seat, status):
    primary, secondary = chain
    primary.fail(status)
    secondary.answer("kiwi", input_tokens=9, output_tokens=1)

    result = ask(seat)

    assert (result.value, result.provider) == ("kiwi", "secondary")
    assert len(primary.requests) == 1 and len(secondary.requests) == 1
    failed, answered = spend_events()
    assert (failed.payload["provider"], failed.payload["input_tokens"], failed.payload["output_tokens"]) == ("primary", 0, 0)
    assert failed.payload["outcome"] != "answered"
    assert (answered.payload["provider"], answered.payload["outcome"], answered.payload["input_tokens"]) == (
        "secondary", "answered", 9
    )


def test_a_timeout_falls_through_to_the_next_alias(chain, seat, serve_config, openai_server, anthropic_server):
    llm = {
        "primary": openai_spec(openai_server, timeout_seconds=0.3, max_retries=0),
        "secondary": anthropic_spec(anthropic_server),
    }
    serve_config(providers=schema.Providers(llm=llm, embeddings=schema.EmbeddingSpec(kind="hashing", dimensions=256)))
    openai_server.stall(5)

    assert ask(seat).provider == "secondary"


def test_a_missing_key_falls_through_without_a_request_or_a_record(chain, seat, monkeypatch, serve_config, openai_server, anthropic_server):
    monkeypatch.delenv(OPENAI_KEY_ENV)
    llm = {
        "primary": openai_spec(openai_server, base_url="https://llm.example.invalid/v1"),
        "secondary": anthropic_spec(anthropic_server),
    }
    serve_config(providers=schema.Providers(llm=llm, embeddings=schema.EmbeddingSpec(kind="hashing", dimensions=256)))

    assert ask(seat).provider == "secondary"
    assert openai_server.requests == []
    assert outcomes() == [("secondary", "answered")]


@pytest.mark.parametrize("status", [400, 422])
def test_a_refusal_does_not_fall_through_and_is_recorded_as_refused(chain, seat, status):
    primary, secondary = chain
    primary.fail(status)

    with pytest.raises(RefusedError):
        ask(seat, "background")

    assert secondary.requests == []
    assert outcomes() == [("primary", "refused")]
    assert not BudgetCounter.objects.exists()  # the refusal reported no usage: nothing to charge


def test_when_every_alias_fails_the_last_error_is_raised(chain, seat):
    primary, secondary = chain
    primary.fail(401)
    secondary.fail(529)

    with pytest.raises(TransientError, match="529"):
        ask(seat, "background")

    assert outcomes() == [("primary", "configuration"), ("secondary", "transient")]


def test_a_configuration_failure_last_in_the_chain_is_raised_as_configuration(chain, seat):
    primary, secondary = chain
    primary.fail(500)
    secondary.fail(404)

    with pytest.raises(ConfigurationError, match="404"):
        ask(seat, "background")


def test_the_first_alias_answers_when_it_can(chain, seat):
    primary, secondary = chain
    primary.answer("kiwi", input_tokens=4, output_tokens=1)

    result = ask(seat)

    assert result.provider == "primary"
    assert secondary.requests == []
    request = primary.last().body
    assert request["messages"] == CHAIN_PURPOSE.render(Worded(word="kiwi"))
    assert request["max_tokens"] == CHAIN_PURPOSE.max_tokens


def test_an_empty_auxiliary_chain_falls_back_to_the_role_llm_chain(chain, seat):
    primary, secondary = chain
    seat.role.llm_auxiliary = []
    seat.role.llm = ["secondary"]
    seat.role.save()

    assert ask(seat).provider == "secondary"
    assert primary.requests == []


def test_every_completion_the_endpoint_served_is_one_spend_row_failed_and_truncated_included(chain, seat):
    """The seam's books balance against the server's log: each request it answered is one record."""
    from core.providers.errors import TruncatedError

    primary, secondary = chain
    primary.answer("kiwi", input_tokens=5, output_tokens=1)  # answered
    primary.answer("kiwi kiwi kiwi", finish_reason="length", input_tokens=5, output_tokens=3)  # truncated ...
    secondary.answer("kiwi", input_tokens=6, output_tokens=1)  # ... so the next alias answers
    primary.fail(503)  # failed ...
    secondary.fail(429)  # ... and failed again: the call fails

    assert ask(seat).provider == "primary"
    assert ask(seat).provider == "secondary"
    with pytest.raises(TransientError):
        ask(seat, "background")

    served = len(primary.requests) + len(secondary.requests)
    assert served == len(spend_events()) == 5
    assert outcomes() == [
        ("primary", "answered"), ("primary", "truncated"), ("secondary", "answered"),
        ("primary", "transient"), ("secondary", "rate_limited"),
    ]
    charged = sum(e.payload["input_tokens"] + e.payload["output_tokens"] for e in spend_events())
    assert charged == 6 + 8 + 7
    assert BudgetCounter.objects.get(scope="seat", scope_id=seat.pk).tokens == charged
    assert TruncatedError.kind == "truncated"


def test_a_prompt_past_the_alias_context_window_is_cut_visibly_to_fit(chain, seat, serve_config, openai_server, anthropic_server):
    llm = {"primary": openai_spec(openai_server, context_tokens=600), "secondary": anthropic_spec(anthropic_server)}
    serve_config(providers=schema.Providers(llm=llm, embeddings=schema.EmbeddingSpec(kind="hashing", dimensions=256)))
    openai_server.answer("kiwi")
    word = "kiwi " * 2000  # ~10 KB: about 3,300 estimated tokens against a 600-token window

    auxiliary.call(seat=seat, stage="reflection", purpose=CHAIN_PURPOSE.name, inputs={"word": word})

    sent = openai_server.last().body["messages"]
    user = sent[-1]["content"]
    assert len(user) < len(word) and "characters cut to fit the model's context window" in user
    assert user.startswith("kiwi kiwi") and sum(len(m["content"]) for m in sent) / 3 + CHAIN_PURPOSE.max_tokens <= 600
