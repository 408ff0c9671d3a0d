"""The reflect dispatcher: one pass per turn, the gates in the spec's order, every worker isolated.

Gates, in order, each recorded by name per worker per turn on ``reflection_completed``:
no_workers, no_role, role_opted_out, no_budget, duplicate, no_engagement, then each worker's own.
A failed worker is logged and reported by name; the others still run and the pass completes.

A pass has two halves. The first (``run_pass`` up to ``_commit``) opens no transaction: the gates,
the reads, every model call (its spend deferred) and every embed; each worker's ``run`` returns
what it would write. The second is ONE transaction: the skill-reflection signal, each worker's
writes in its own savepoint (a failed write is rolled back alone, with the events it announced;
a failed episodist rolls back the whole pass, since a turn is never reflected without its episode),
the pass's spend in one charge, its events in one bulk insert, and the turn's ``reflected_at``.
A pass that cannot commit still charges its spend and leaves the turn for a later pass.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from core import auxiliary, budgets, events
from learning.events import ReflectionCompleted, WorkerFailed, WorkerOutcome, WorkerRan, WorkerSkipped
from learning.models import Turn
from learning.reflection import registry
from learning.reflection.ring import RING
from learning.reflection.turn_context import TurnContext
from learning.reflection.worker import Prepared, Result, Worker
from learning.reflection.workers import episodist, skill_reflector

log = logging.getLogger("learning.reflection")

NO_WORKERS = "no_workers"
NO_ROLE = "no_role"
ROLE_OPTED_OUT = "role_opted_out"
NO_BUDGET = "no_budget"
DUPLICATE = "duplicate"
NO_ENGAGEMENT = "no_engagement"
GATES = (NO_WORKERS, NO_ROLE, ROLE_OPTED_OUT, NO_BUDGET, DUPLICATE, NO_ENGAGEMENT)
# The one transient refusal: a turn skipped for it stays reflectable when the ceiling moves.
TRANSIENT_GATES = (NO_BUDGET,)
# What a worker's first half leaves for the write half: its outcome, or the write to run.
FirstHalf = WorkerSkipped | WorkerFailed | Prepared


class EpisodeNotFiled(Exception):
    """The episodist failed: the pass is rolled back whole and the turn left for a later pass."""


@dataclass
class PassResult:
    turn_id: int
    run_id: str
    gate: str | None
    workers: dict[str, WorkerOutcome] = field(default_factory=dict)
    duration_ms: int = 0
    committed: bool = True  # False: the write half failed; the turn is left for a later pass

    @property
    def reflectable_again(self) -> bool:
        return self.gate in TRANSIENT_GATES or not self.committed

    @property
    def failed(self) -> list[str]:
        return [name for name, r in self.workers.items() if isinstance(r, WorkerFailed)]


def _role_opted_out(ctx: TurnContext) -> bool:
    return not ctx.seat.role.learns or not ctx.knobs.learning.enabled


def _no_engagement(ctx: TurnContext) -> bool:
    """A skipped turn, or a done one that processed nothing externally observable: no tool call and no
    reply (in most runtimes the answer to a chat message is the model's final message, not a tool)."""
    return ctx.outcome == "skipped" or (ctx.outcome == "done" and not ctx.tools_called and not ctx.record.replied)


def dispatch_gate(ctx: TurnContext, wired: list[Worker]) -> str | None:
    """The first pass-wide gate that closes for this turn, or None (the ring is taken on the way)."""
    if not wired:
        return NO_WORKERS
    if ctx.seat.role is None:
        return NO_ROLE
    if _role_opted_out(ctx):
        return ROLE_OPTED_OUT
    if budgets.has_room(ctx.seat) is False:  # None (unreadable counter) reflects anyway
        return NO_BUDGET
    if RING.seen((ctx.seat.pk, ctx.run_id)):
        return DUPLICATE
    ctx.notes["signal_due"] = True  # the signal outlives a turn that engaged with nothing
    if _no_engagement(ctx):
        return NO_ENGAGEMENT
    return None


def _write_signal(ctx: TurnContext) -> None:
    """Write the skill-reflection signal; a failed write is logged and never skips the pass."""
    try:
        with transaction.atomic():  # a savepoint: a failed write leaves the pass's transaction usable
            skill_reflector.accumulate(ctx)
    except Exception:
        log.exception("skill-reflection signal write failed on turn %s", ctx.run_id)


def _prepare_worker(worker: Worker, ctx: TurnContext) -> FirstHalf:
    """The first half of one worker: its outcome, or the write that will produce it."""
    try:
        gate = worker.applies(ctx)
        if gate:
            return WorkerSkipped(gate=gate)
        return worker.run(ctx)
    except Exception as exc:  # isolation: one worker's bug costs neither the others nor the pass
        log.exception("reflection worker %s failed on turn %s", worker.name, ctx.run_id)
        return WorkerFailed(error=f"{type(exc).__name__}: {exc}")


def _apply_worker(name: str, prepared: FirstHalf, ctx: TurnContext) -> WorkerOutcome:
    """The second half, inside the pass's transaction: the worker's writes, in their own savepoint."""
    if isinstance(prepared, (WorkerSkipped, WorkerFailed)):
        return prepared
    if isinstance(prepared, Result):  # nothing to write
        return WorkerRan(result=prepared.recorded())
    try:
        with transaction.atomic(), events.batched():  # a failed write takes its own events with it
            return WorkerRan(result=prepared().recorded())
    except Exception as exc:
        log.exception("reflection worker %s failed writing turn %s", name, ctx.run_id)
        return WorkerFailed(error=f"{type(exc).__name__}: {exc}")


def run_pass(ctx: TurnContext) -> PassResult:
    """Gates, then every wired worker in registry order; the reflection record is always published."""
    started = time.monotonic()
    wired = registry.wired_workers()
    result = PassResult(turn_id=ctx.turn.pk, run_id=ctx.run_id, gate=None)
    try:
        result.gate = dispatch_gate(ctx, wired)
    except Exception as exc:
        log.exception("reflection gates failed on turn %s", ctx.run_id)
        result.gate = f"gate_error: {type(exc).__name__}"
    prepared: dict[str, FirstHalf] = {}
    if result.gate:
        prepared = {w.name: WorkerSkipped(gate=result.gate) for w in wired}
    else:
        skill_reflector.earned(ctx)  # this turn's own signal counts for its own persistence pass
        ctx.notes["skill_reflection_gate"] = skill_reflector.applies(ctx)
        for worker in wired:
            prepared[worker.name] = _prepare_worker(worker, ctx)
    _commit(ctx, result, prepared, started)
    return result


def _write_half(ctx: TurnContext, result: PassResult, prepared: dict[str, FirstHalf], started: float) -> None:
    """ONE transaction: the signal, the workers' writes (each in a savepoint), the spend, the events,
    the turn's mark."""
    with transaction.atomic(), events.batched():
        if ctx.notes.get("signal_due") and skill_reflector.earned(ctx):
            _write_signal(ctx)
        result.workers = {name: _apply_worker(name, p, ctx) for name, p in prepared.items()}
        if episodist.Episodist.name in result.failed:  # the turn's own record: a pass without it is no reflection
            raise EpisodeNotFiled(f"turn {ctx.run_id}: the episode could not be filed")
        if not result.gate:
            result.workers[skill_reflector.NAME] = skill_reflector.report(ctx)
        auxiliary.record_batch(ctx.seat, ctx.spend)
        result.duration_ms = int((time.monotonic() - started) * 1000)
        _publish(ctx, result)
        if not result.reflectable_again:
            Turn.objects.filter(pk=ctx.turn.pk).update(reflected_at=timezone.now())


def _commit(ctx: TurnContext, result: PassResult, prepared: dict[str, FirstHalf], started: float) -> None:
    """The write half: ONE transaction, or (it failed) the spend charged alone and the turn left."""
    try:
        _write_half(ctx, result, prepared, started)
    except Exception:
        log.exception("reflection pass for turn %s could not commit; left for a later pass", ctx.run_id)
        result.committed = False
        RING.forget((ctx.seat.pk, ctx.run_id))  # its next pass is not a duplicate of this one
        try:
            auxiliary.record_batch(ctx.seat, ctx.spend)  # every completion made for the seat is charged
        except Exception:
            log.exception("spend of the uncommitted pass for turn %s could not be recorded", ctx.run_id)


def _publish(ctx: TurnContext, result: PassResult) -> None:
    events.publish(
        ReflectionCompleted(
            turn=ctx.turn.pk,
            run_id=ctx.run_id,
            gate=result.gate,
            workers=result.workers,
            order=list(result.workers),
            failed=result.failed,
            duration_ms=result.duration_ms,
        ),
        seat=ctx.seat,
        turn_id=ctx.run_id,
    )


def reflect(turn, *, now=None) -> PassResult:
    return run_pass(TurnContext.of(turn, now=now))
