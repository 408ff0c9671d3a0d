"""The auxiliary seam: the only way code reaches a chat model.

Every call names its stage, purpose and turn, or is refused before any model is resolved. The
seat's ``llm_auxiliary`` chain is tried in order (falling back to its ``llm`` chain), falling
through on transient, configuration and truncation errors; a refusal is final. The prompt is cut
to each alias's context window. Every attempt that reached an endpoint is charged to the seat's
and the company's budget with the tokens it reported and recorded as one ``auxiliary_spend``
event naming its outcome (answered, unparseable, truncated, refused, transient, ...), failed
attempts included; an answer is then parsed by its purpose.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.db import transaction

from core import budgets, events, purposes
from core.providers.errors import ConfigurationError, ProviderError, RefusedError
from core.providers.llm.base import Completion
from core.purposes import AnswerUnparseable

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
    finish: str = "stop"


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
    aliases: list[str] | None = None,
) -> AuxResult:
    """Answer one auxiliary question for ``seat``; raises ``ProviderError`` or ``AnswerUnparseable``.

    ``defer_record`` (for calls made on worker threads) skips the database writes and returns a
    result whose ``record()`` the calling thread runs; nothing is ever left unrecorded. ``aliases``
    (the operator's probe) asks those providers instead of the seat's chain.
    """
    if stage not in STAGES:
        raise UnattributedCall(f"auxiliary call refused: stage {stage!r} is not one of {', '.join(STAGES)}")
    if not purpose:
        raise UnattributedCall("auxiliary call refused: no purpose named")
    spec_purpose = purposes.get(purpose)
    inputs = inputs or {}
    from crewlet import config

    providers = config.current().providers.llm
    chain = [alias for alias in (aliases if aliases is not None else chain_for(seat)) if alias in providers]
    if not chain:
        raise NoAuxiliaryModel(
            f"seat {seat.handle} has no auxiliary model (role llm_auxiliary and llm are empty)", sent=False
        )
    rendered = spec_purpose.render(inputs)
    budget = max_tokens or spec_purpose.max_tokens
    last_error: ProviderError | None = None
    records: list = []  # one spend record per attempt that reached an endpoint, failed ones included
    from core.providers.llm import build, window

    def flush():
        for one in records:
            one()
        records.clear()

    def settle(error):
        """Raise ``error`` with its records flushed, or (deferred) attached as ``error.record``."""
        if defer_record:
            error.record = _all(list(records))
        else:
            flush()
        return error

    for alias in chain:
        spec = providers[alias]
        provider = build(alias, spec)
        reserved = budget + (getattr(spec, "reasoning_tokens", 0) or 0)
        messages = window.fit(rendered, context_tokens=getattr(spec, "context_tokens", 0), reserved=reserved)
        try:
            completion = provider.complete(
                messages, max_tokens=budget, json=spec_purpose.json, purpose=spec_purpose, inputs=inputs
            )
        except ProviderError as exc:
            exc.provider = alias
            if exc.sent:
                spent = Completion(text="", input_tokens=exc.input_tokens, output_tokens=exc.output_tokens,
                                   model=exc.model or getattr(provider, "model", "") or "", finish=exc.finish)
                records.append(partial(_record, seat, stage, purpose, turn_id, alias, spent, exc.kind))
            if isinstance(exc, RefusedError):
                raise settle(exc) from None
            log.warning("provider %s failed for %s (%s); trying the next", alias, purpose, exc.kind)
            last_error = exc
            continue
        try:
            value = spec_purpose.parse(completion.text)
        except AnswerUnparseable as exc:
            exc.provider, exc.finish = alias, completion.finish
            exc.input_tokens, exc.output_tokens = completion.input_tokens, completion.output_tokens
            records.append(partial(_record, seat, stage, purpose, turn_id, alias, completion, "unparseable"))
            raise settle(exc) from None
        records.append(partial(_record, seat, stage, purpose, turn_id, alias, completion, "answered"))
        if not defer_record:
            flush()
        return AuxResult(
            record=_all(list(records)) if defer_record else _noop,
            value=value,
            text=completion.text,
            provider=alias,
            model=completion.model,
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
            finish=completion.finish,
        )
    assert last_error is not None
    raise settle(last_error)


def _all(records: list):
    def record():
        while records:
            records.pop(0)()

    return record


def _record(seat, stage, purpose, turn_id, alias, completion, outcome) -> None:
    """Charge both counters and append the spend event in ONE transaction (one commit per attempt)."""
    tokens = completion.input_tokens + completion.output_tokens
    with transaction.atomic():
        try:
            if tokens:
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
            outcome=outcome,
            finish=completion.finish,
        )
