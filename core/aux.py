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
from typing import TYPE_CHECKING, Any

from django.db import transaction

from core import budgets, events, purposes
from core.event_types import AuxiliarySpend, EventPayload
from core.providers.errors import ConfigurationError, ProviderError, RefusedError
from core.purposes import AnswerUnparseable

if TYPE_CHECKING:
    from crewlet.models import Seat

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
    attempts: tuple = ()  # every attempt of the call, failed ones first: one spend record each


def chain_for(seat: Seat) -> list[str]:
    role = getattr(seat, "role", None)
    if role is None:
        return []
    return list(role.llm_auxiliary or role.llm or [])


def available(seat: Seat) -> bool:
    """Whether any auxiliary model is configured for this seat (no I/O)."""
    from crewlet import config

    providers = config.current().providers.llm
    return any(alias in providers for alias in chain_for(seat))


def call(
    *,
    seat: Seat,
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
    attempts: list[Attempt] = []  # one per attempt that reached an endpoint, failed ones included
    from core.providers.llm import build, window

    def settle(error):
        """``error`` carrying its attempts, recorded now or (deferred) by ``error.record()``."""
        error.attempts = tuple(attempts)
        error.record = partial(record_attempts, seat, error.attempts)
        if not defer_record:
            error.record()
            error.record = _noop
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
                model = exc.model or getattr(provider, "model", "") or ""
                attempts.append(Attempt(stage, purpose, turn_id, alias, model, exc.input_tokens, exc.output_tokens,
                                        exc.kind, exc.finish))
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
            attempts.append(_attempt(stage, purpose, turn_id, alias, completion, "unparseable"))
            raise settle(exc) from None
        attempts.append(_attempt(stage, purpose, turn_id, alias, completion, "answered"))
        done = tuple(attempts)
        if not defer_record:
            record_attempts(seat, done)
        return AuxResult(
            record=partial(record_attempts, seat, done) if defer_record else _noop,
            value=value,
            text=completion.text,
            provider=alias,
            model=completion.model,
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
            finish=completion.finish,
            attempts=done,
        )
    assert last_error is not None
    raise settle(last_error)


@dataclass(frozen=True)
class Attempt:
    """One request that reached an endpoint: what one ``auxiliary_spend`` event records."""

    stage: str
    purpose: str
    turn_id: str
    provider: str
    model: str
    input_tokens: int
    output_tokens: int
    outcome: str  # answered | unparseable | truncated | refused | transient | rate_limited | configuration | ...
    finish: str


def _attempt(stage, purpose, turn_id, alias, completion, outcome) -> Attempt:
    return Attempt(stage, purpose, turn_id, alias, completion.model, completion.input_tokens,
                   completion.output_tokens, outcome, completion.finish)


def record_batch(seat: Seat, results: list, *, isolated: bool = True) -> None:
    """Record many deferred calls of one seat at once (answers, or the errors a deferred call raised):
    ONE charge of their summed tokens and their spend events, in one transaction."""
    record_attempts(seat, tuple(a for r in results for a in getattr(r, "attempts", ())), isolated=isolated)


def record_attempts(seat: Seat, attempts: tuple, *, isolated: bool = True) -> None:
    """Charge both counters and append one spend event an attempt, in ONE transaction (one commit).

    ``isolated`` (the default): a charge that fails is logged and rolled back alone (a savepoint),
    and the spend events are written all the same, best effort. Not ``isolated``: for a caller that
    runs it inside its own transaction and retries it isolated when anything fails there (the turn
    start's writes, a reflection pass's): no savepoint, a failure raises, and the events go to the
    caller's open ``events.batched`` (else one plain insert).
    """
    if not attempts:
        return
    tokens = sum(a.input_tokens + a.output_tokens for a in attempts)
    spend: list[tuple[EventPayload, Any, str]] = [
        (AuxiliarySpend(stage=a.stage, purpose=a.purpose, provider=a.provider, model=a.model or "",
                        input_tokens=a.input_tokens, output_tokens=a.output_tokens, outcome=a.outcome,
                        finish=a.finish), seat, a.turn_id)
        for a in attempts
    ]
    if not isolated:
        if tokens:
            budgets.charge(seat, tokens)
        with events.batched(isolated=False):
            events.publish_many(spend)
        return
    # no savepoint of its own: nothing escapes it but a programming error (the charge and the
    # events each catch their own failures)
    with transaction.atomic(savepoint=False):
        try:
            if tokens:
                with transaction.atomic():
                    budgets.charge(seat, tokens)
        except Exception:
            log.warning("could not charge %s tokens to %s", tokens, seat.handle, exc_info=True)
        events.publish_many(spend)
