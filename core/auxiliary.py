"""The auxiliary seam: the only way code reaches a chat model.

Every call names its stage, purpose and turn, or is refused before any model is resolved. Before a
model is asked for a seat's turn (stages ``turn`` and ``reflection``), the seat's and its company's
budgets are checked (an offline alias costs nothing and is not); background passes, which keep the
stores bounded, and the operator's probe are charged but not refused. The seat's ``llm_auxiliary`` chain is tried in order (falling back to its ``llm``
chain): a transient, configuration (a prompt past the model's context window among them) or
truncation error, an unparseable answer and an answer the purpose judges out
(``core.purposes.judge``: a template's blank, an echo of the input, a value the input cannot
support) each fall through to the next alias; a refusal ends the chain for this input. The prompt
is cut to each alias's context window. Every attempt that reached an endpoint is charged to the
seat's and the company's budget with the tokens it reported and recorded as one ``auxiliary_spend``
event naming its outcome and, for a failed one, its reason.

A call made for a turn (stages ``turn`` and ``reflection``) that no model of the chain answered
usably (or that the budget or its deadline refused) is answered by the purpose's offline
heuristic, the supported last resort: ``AuxResult.provider`` is then ``offline`` and ``fallback``
says why. Background and operator calls raise instead, and are retried by their next run.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from django.db import transaction
from pydantic import BaseModel

from core import budgets, events, purposes
from core.event_types import AuxiliarySpend, EventPayload
from core.providers import in_force
from core.providers.errors import ConfigurationError, ProviderError, RefusedError, TransientError
from core.purposes import AnswerRejected, AnswerUnparseable

if TYPE_CHECKING:
    from crewlet.models import Seat

log = logging.getLogger("core.auxiliary")

STAGES = ("turn", "reflection", "background", "operator")
# the stages a turn waits on or learns from: budget-checked, and what no model answered is answered offline
TURN_STAGES = ("turn", "reflection")
OFFLINE = "offline"
FREE_KINDS = ("offline",)  # kinds that cost nothing: asked without a budget check, never judged
REASON_CHARS = 300


class UnattributedCall(ValueError):
    """A call that does not say whose cost it is (no stage or no purpose)."""


class NoAuxiliaryModel(ConfigurationError):
    """Neither the role's ``llm_auxiliary`` nor its ``llm`` chain names a provider."""


class OverBudget(ProviderError):
    """The seat or its company has spent its token budget for the window: no model is asked."""

    kind = "budget"


class PastDeadline(TransientError):
    """The caller's deadline passed before the next alias could be asked."""

    kind = "deadline"


def _noop():
    return None


@dataclass(frozen=True)
class AuxResult:
    record: Any  # () -> None: records the spend (a no-op once recorded)
    value: Any
    text: str
    provider: str  # the alias that answered, or ``offline`` for the offline floor
    model: str
    input_tokens: int
    output_tokens: int
    finish: str = "stop"
    attempts: tuple = ()  # every attempt of the call, failed ones first: one spend record each
    fallback: str = ""  # why the offline floor answered ("" when a model did)
    fallback_kind: str = ""  # budget | deadline | rejected | unparseable | transient | configuration | ...


def chain_for(seat: Seat) -> list[str]:
    role = getattr(seat, "role", None)
    if role is None:
        return []
    return list(role.llm_auxiliary or role.llm or [])


def available(seat: Seat) -> bool:
    """Whether any auxiliary model is configured for this seat (no I/O)."""
    providers = in_force.providers().llm
    return any(alias in providers for alias in chain_for(seat))


def call(
    *,
    seat: Seat,
    stage: str,
    purpose: str,
    turn_id: str = "",
    inputs: BaseModel | dict | None = None,
    max_tokens: int | None = None,
    defer_record: bool = False,
    aliases: list[str] | None = None,
    deadline: float | None = None,
    room: bool | None = None,
    offline_floor: bool | None = None,
) -> AuxResult:
    """Answer one auxiliary question for ``seat``; raises ``ProviderError`` or ``AnswerUnparseable``
    (only where no offline floor answers: see the module docstring).

    ``inputs`` is the purpose's inputs model, or a dict validated into it here, once; inputs the
    model refuses raise ``purposes.InvalidInputs`` (naming the purpose and the field) before any
    model is resolved.

    ``defer_record`` (for calls made on worker threads) skips the database writes and returns a
    result whose ``record()`` the calling thread runs; nothing is ever left unrecorded. ``aliases``
    (the operator's probe) asks those providers instead of the seat's chain. ``deadline`` (a
    ``time.monotonic()`` instant) bounds every request and ends the chain when it passes. ``room``
    is the budget check the caller already made (the turn start makes it once, on its request
    thread); None checks here. ``offline_floor`` overrides the stage's rule.
    """
    if stage not in STAGES:
        raise UnattributedCall(f"auxiliary call refused: stage {stage!r} is not one of {', '.join(STAGES)}")
    if not purpose:
        raise UnattributedCall("auxiliary call refused: no purpose named")
    spec_purpose = purposes.get(purpose)
    typed = spec_purpose.read_inputs(inputs)
    providers = in_force.providers().llm
    chain = [alias for alias in (aliases if aliases is not None else chain_for(seat)) if alias in providers]
    if not chain:
        raise NoAuxiliaryModel(
            f"seat {seat.handle} has no auxiliary model (role llm_auxiliary and llm are empty)", sent=False
        )
    floor = stage in TURN_STAGES if offline_floor is None else offline_floor
    if stage not in TURN_STAGES:
        room = True
    rendered = spec_purpose.render(typed)
    budget = max_tokens or spec_purpose.max_tokens
    last_error: ProviderError | AnswerUnparseable | None = None
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

    def result(value, text, alias, completion, fallback="", kind="") -> AuxResult:
        done = tuple(attempts)
        if not defer_record:
            record_attempts(seat, done)
        return AuxResult(
            record=partial(record_attempts, seat, done) if defer_record else _noop,
            value=value, text=text, provider=alias, model=completion.model if completion else OFFLINE,
            input_tokens=completion.input_tokens if completion else 0,
            output_tokens=completion.output_tokens if completion else 0,
            finish=completion.finish if completion else "stop", attempts=done, fallback=fallback,
            fallback_kind=kind,
        )

    for position, alias in enumerate(chain):
        spec = providers[alias]
        following = chain[position + 1] if position + 1 < len(chain) else (OFFLINE if floor else "")
        if spec.kind not in FREE_KINDS:
            if room is None:
                room = budgets.has_room(seat) is not False  # an unreadable counter asks anyway
            if not room:
                last_error = OverBudget(f"seat {seat.handle} or its company is over its token budget; no model asked",
                                        sent=False)
                log.info("%s for %s: over its token budget; %s", purpose, seat.handle,
                         "answering offline" if floor else "no model asked")
                if floor:
                    break
                raise settle(last_error)
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            last_error = PastDeadline(f"the caller's deadline passed before {alias} was asked", sent=False)
            break
        provider = build(alias, spec)
        reserved = budget + (getattr(spec, "reasoning_tokens", 0) or 0)
        messages = window.fit(rendered, context_tokens=getattr(spec, "context_tokens", 0), reserved=reserved)
        try:
            completion = provider.complete(
                messages, max_tokens=budget, json=spec_purpose.json, purpose=spec_purpose, inputs=typed,
                timeout=left,
            )
        except ProviderError as exc:
            exc.provider = alias
            if exc.sent:
                model = exc.model or getattr(provider, "model", "") or ""
                attempts.append(Attempt(stage, purpose, turn_id, alias, model, exc.input_tokens, exc.output_tokens,
                                        exc.kind, exc.finish, _reason(str(exc))))
            last_error = exc
            if isinstance(exc, RefusedError):  # the input itself was refused: no other model is sent it
                log.warning("%s: %s refused %s (%s); %s", purpose, alias, seat.handle, _reason(str(exc)),
                            _next_step(OFFLINE if floor else ""))
                break
            log.warning("%s: %s failed (%s: %s); %s", purpose, alias, exc.kind, _reason(str(exc)),
                        _next_step(following))
            continue
        try:
            value = spec_purpose.parse(completion.text)
            if not completion.offline:
                why = purposes.judge(spec_purpose, value, typed, rendered)
                if why:
                    raise AnswerRejected(purpose, why, completion.text)
        except AnswerUnparseable as exc:
            exc.provider, exc.finish = alias, completion.finish
            exc.input_tokens, exc.output_tokens = completion.input_tokens, completion.output_tokens
            outcome = "rejected" if isinstance(exc, AnswerRejected) else "unparseable"
            attempts.append(_attempt(stage, purpose, turn_id, alias, completion, outcome, _reason(exc.reason)))
            log.warning("%s: %s's answer %s (%s); %s", purpose, alias, "rejected" if outcome == "rejected"
                        else "unparseable", _reason(exc.reason), _next_step(following))
            last_error = exc
            continue
        attempts.append(_attempt(stage, purpose, turn_id, alias, completion, "answered"))
        return result(value, completion.text, alias, completion)
    assert last_error is not None
    if not floor:
        raise settle(last_error)
    text = spec_purpose.offline(typed)
    why = f"{getattr(last_error, 'provider', '') or 'the chain'}: {_reason(str(last_error))}"
    if deadline is not None and time.monotonic() >= deadline:
        kind = "deadline"
    elif isinstance(last_error, AnswerUnparseable):
        kind = "rejected" if isinstance(last_error, AnswerRejected) else "unparseable"
    else:
        kind = last_error.kind
    return result(spec_purpose.parse(text), text, OFFLINE, None, fallback=why, kind=kind)


def paid(seat: Seat) -> bool:
    """Whether the seat's chain names an alias that costs tokens (one the budget is checked for)."""
    providers = in_force.providers().llm
    return any(providers[a].kind not in FREE_KINDS for a in chain_for(seat) if a in providers)


def _next_step(following: str) -> str:
    """What the seam does next, for its one log line a fall-through ("trying" only when one follows)."""
    if following == OFFLINE:
        return "answering offline"
    return f"trying {following}" if following else "no alias left"


def _reason(text: str) -> str:
    return " ".join(str(text).split())[:REASON_CHARS]


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
    outcome: str  # answered | unparseable | rejected | truncated | refused | transient | configuration | ...
    finish: str
    reason: str = ""  # why a failed attempt failed (the error, or what the answer's check found)


def _attempt(stage, purpose, turn_id, alias, completion, outcome, reason="") -> Attempt:
    return Attempt(stage, purpose, turn_id, alias, completion.model, completion.input_tokens,
                   completion.output_tokens, outcome, completion.finish, reason)


def record_batch(seat: Seat, results: list) -> None:
    """Record many deferred calls of one seat at once (answers, or the errors a deferred call raised):
    ONE charge of their summed tokens and their spend events, in one transaction."""
    record_attempts(seat, tuple(a for r in results for a in getattr(r, "attempts", ())))


def record_attempts(seat: Seat, attempts: tuple) -> None:
    """Charge both counters and append one spend event an attempt, in ONE transaction (one commit).

    A charge that fails is logged and rolled back alone (a savepoint), and the spend events are
    written all the same, best effort.
    """
    if not attempts:
        return
    tokens = sum(a.input_tokens + a.output_tokens for a in attempts)
    spend: list[tuple[EventPayload, Any, str]] = [
        (AuxiliarySpend(stage=a.stage, purpose=a.purpose, provider=a.provider, model=a.model or "",
                        input_tokens=a.input_tokens, output_tokens=a.output_tokens, outcome=a.outcome,
                        finish=a.finish, reason=a.reason), seat, a.turn_id)
        for a in attempts
    ]
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
