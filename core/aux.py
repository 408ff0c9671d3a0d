"""The auxiliary seam: the only way code reaches a chat model.

Every call names its stage, purpose and turn, or is refused before any model is resolved. The
seat's ``llm_auxiliary`` chain is tried in order (falling back to its ``llm`` chain), falling
through on transient and configuration errors. Each answered call is charged to the seat's and
the company's budget and recorded as an ``auxiliary_spend`` event, then parsed by its purpose.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from core import budgets, events, purposes
from core.providers.errors import ConfigurationError, ProviderError, RefusedError, TransientError

log = logging.getLogger("core.aux")

STAGES = ("turn", "reflection", "background", "operator")


class UnattributedCall(ValueError):
    """A call that does not say whose cost it is (no stage or no purpose)."""


class NoAuxiliaryModel(ConfigurationError):
    """Neither the role's ``llm_auxiliary`` nor its ``llm`` chain names a provider."""


def _noop():
    return None


@dataclass(frozen=True)
class AuxResult:
    record: Any  # () -> None: records the spend (a no-op once recorded)
    value: Any
    text: str
    provider: str
    model: str
    input_tokens: int
    output_tokens: int
    stage: str = ""
    purpose: str = ""
    turn_id: str = ""


def chain_for(seat) -> list[str]:
    role = getattr(seat, "role", None)
    if role is None:
        return []
    return list(role.llm_auxiliary or role.llm or [])


def available(seat) -> bool:
    """Whether any auxiliary model is configured for this seat (no I/O)."""
    from crewlet import config

    providers = config.current().providers.llm
    return any(alias in providers for alias in chain_for(seat))


def call(
    *,
    seat,
    stage: str,
    purpose: str,
    turn_id: str = "",
    inputs: dict | None = None,
    max_tokens: int | None = None,
    defer_record: bool = False,
) -> AuxResult:
    """Answer one auxiliary question for ``seat``; raises ``ProviderError`` or ``AnswerUnparseable``.

    ``defer_record`` (for calls made on worker threads) skips the database writes and returns a
    result whose ``record()`` the calling thread runs; nothing is ever left unrecorded.
    """
    if stage not in STAGES:
        raise UnattributedCall(f"auxiliary call refused: stage {stage!r} is not one of {', '.join(STAGES)}")
    if not purpose:
        raise UnattributedCall("auxiliary call refused: no purpose named")
    spec_purpose = purposes.get(purpose)
    inputs = inputs or {}
    from crewlet import config

    providers = config.current().providers.llm
    chain = [alias for alias in chain_for(seat) if alias in providers]
    if not chain:
        raise NoAuxiliaryModel(f"seat {seat.handle} has no auxiliary model (role llm_auxiliary and llm are empty)")
    messages = spec_purpose.render(inputs)
    budget = max_tokens or spec_purpose.max_tokens
    last_error: ProviderError | None = None
    from core.providers.llm import build

    for alias in chain:
        provider = build(alias, providers[alias])
        try:
            completion = provider.complete(
                messages, max_tokens=budget, json=spec_purpose.json, purpose=spec_purpose, inputs=inputs
            )
        except RefusedError:
            raise
        except (TransientError, ConfigurationError) as exc:
            log.warning("provider %s failed for %s (%s); trying the next", alias, purpose, exc.kind)
            last_error = exc
            continue
        def record(alias=alias, completion=completion):
            _record(seat, stage, purpose, turn_id, alias, completion)

        if not defer_record:
            record()
        value = spec_purpose.parse(completion.text)
        return AuxResult(
            record=record if defer_record else _noop,
            value=value,
            text=completion.text,
            provider=alias,
            model=completion.model,
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
            stage=stage,
            purpose=purpose,
            turn_id=turn_id,
        )
    assert last_error is not None
    raise last_error


def record_batch(seat, results: list[AuxResult]) -> None:
    """Record many deferred calls of one seat at once: ONE charge of their summed tokens and their spend
    events, in one transaction (a batch of background calls costs one commit, not one each)."""
    if not results:
        return
    tokens = sum(r.input_tokens + r.output_tokens for r in results)
    with transaction.atomic():
        try:
            with transaction.atomic():
                budgets.charge(seat, tokens)
        except Exception:
            log.warning("could not charge %s tokens to %s", tokens, seat.handle, exc_info=True)
        events.publish_many([
            ("auxiliary_spend", seat, r.turn_id, dict(stage=r.stage, purpose=r.purpose, provider=r.provider, model=r.model,
                                           input_tokens=r.input_tokens, output_tokens=r.output_tokens))
            for r in results
        ])


def _record(seat, stage, purpose, turn_id, alias, completion) -> None:
    """Charge both counters and append the spend event in ONE transaction (one commit per call)."""
    tokens = completion.input_tokens + completion.output_tokens
    with transaction.atomic():
        try:
            with transaction.atomic():
                budgets.charge(seat, tokens)
        except Exception:
            log.warning("could not charge %s tokens to %s", tokens, seat.handle, exc_info=True)
        events.publish(
            "auxiliary_spend",
            seat=seat,
            turn_id=turn_id,
            best_effort=True,
            stage=stage,
            purpose=purpose,
            provider=alias,
            model=completion.model,
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
        )
