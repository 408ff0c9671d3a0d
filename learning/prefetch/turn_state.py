"""One turn start's shared state: the request, the gate's decision, the one turn vector, the deadline.

The ask is embedded at most once a turn (shared by the memory and episode searches) under
``prefetch.EmbedBudget``; nothing is embedded on a thin trigger. Every block's auxiliary calls run
on worker threads against ONE deadline (``learning.turn_start_model_seconds`` past the recall): a
call not answered by then is answered by its purpose's offline heuristic, as is one over the
seat's budget (checked once, on the request thread) or one no model answered usably; each such
block is named in the summary's ``model_fallbacks``. A slow model, or one busy with reflection
calls, never holds the turn start past its deadline.

A call still running at the deadline, or one no block collected, is handed to ``core.late_spend``:
cancelled if it was never sent, else charged when it returns (``release_uncollected``).

The turn start's writes (auxiliary spend, the skill offer stamp, the notes' use stamp) are not
made where they arise: blocks ``defer`` them, and the prefetch commits them in one transaction with
the frozen prefix (``commit``); its telemetry events (the summary, the guidance's ``skill_used``, the
knowledge search's ``knowledge_read``, a revived skill's ``skill_revived``) are ``announce``d and
written there in one bulk insert with the spend's. Every collected call's attempts are charged
together: one charge of their summed tokens. Each deferred write keeps its own failure to itself
(a savepoint of its own), so a write that fails costs only itself.
"""

from __future__ import annotations

import concurrent.futures
import logging
import time
from dataclasses import dataclass, field
from datetime import datetime

from django.db import DatabaseError, transaction
from django.utils import timezone
from pydantic import BaseModel

from core import auxiliary, budgets, events, late_spend, purposes
from core.providers.embeddings import EmbedResult, PendingEmbed, begin_embed_one
from core.providers.embeddings.base import PREFETCH_EMBED_BUDGET
from crewlet.config import knobs_for_seat
from crewlet.models import Seat
from learning.memory import diary, episode_search
from learning.prefetch.gate import thin_trigger
from learning.prefetch.request import PrefetchRequest

log = logging.getLogger("learning.prefetch")

_pool = concurrent.futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="prefetch-aux")

# what became of the one turn vector, as prefetch_summary's turn_embedding reports it
EMBEDDING_STATUS = {"embedded": "embedded", "unconfigured": "unconfigured"}


# past the deadline, the seam's own offline answer (a fraction of a millisecond) is waited for this long
DEADLINE_GRACE = 0.25


class AuxDidNotAnswer(Exception):
    """An auxiliary call that failed, could not be parsed, or was still running at the deadline."""


@dataclass
class PrefetchContext:
    seat: Seat
    request: PrefetchRequest
    thin: bool = False
    deadline: float = 0.0
    _embedding: EmbedResult | None = field(default=None, repr=False)
    _deferred: list = field(default_factory=list, repr=False)
    _announced: list = field(default_factory=list, repr=False)
    _attempts: list = field(default_factory=list, repr=False)
    _embedding_pending: PendingEmbed | None = field(default=None, repr=False)
    _uncollected: set = field(default_factory=set, repr=False)
    _asked: dict = field(default_factory=dict, repr=False)  # each call's (purpose, inputs), for its offline answer
    _by_words: dict = field(default_factory=dict, repr=False)  # "notes"/"episodes" -> their ranking by the ask's words
    now: datetime = field(default_factory=timezone.now)  # the moment the seat's live notes are read at
    room: bool | None = None  # the budget check, made once on the request thread before the first paid call
    fallbacks: dict = field(default_factory=dict)  # purpose -> why it was answered offline (the summary's)

    @classmethod
    def start(cls, *, seat: Seat, request: PrefetchRequest) -> PrefetchContext:
        _ = seat.role  # loaded here, so worker threads never touch the database for it
        return cls(seat=seat, request=request, thin=thin_trigger(request))

    @property
    def turn_id(self) -> str:
        return self.request.run_id

    def begin_embed(self) -> None:
        """Send the ask's one embed to the embed pool now, so the database-only blocks run beside it.

        Sent straight to the pool's worker (``begin_embed_one``), not through a thread of ours that
        would wait on it: one thread handoff before the model runs, not two.
        """
        if not self.thin and self._embedding is None:
            self._sent_embed()

    def _sent_embed(self) -> PendingEmbed:
        if self._embedding_pending is None:
            self._embedding_pending = begin_embed_one(self.request.ask, budget=PREFETCH_EMBED_BUDGET)
        return self._embedding_pending

    def turn_vector(self) -> EmbedResult:
        """The ask's vector, embedded once; a thin trigger never asks for one.

        An embed no pool worker has started by now (a busy host can wake the worker late, after the
        request's thread has already reached this wait) is run here instead: this thread would only
        wait for it, and then wait again to be woken.
        """
        if self.thin:
            raise RuntimeError("a thin trigger embeds nothing")
        if self._embedding is None:
            # within the budget counted from when it was sent; not started by a worker yet: embedded here
            self._embedding = self._sent_embed().results(here_if_unstarted=True)[0]
        return self._embedding

    def rank_by_words(self) -> None:
        """Rank the seat's notes and past turns by the ask's words while the ask embeds: those statements
        need no vector, only the model and width it will have, so the database works beside the embed."""
        shape = None if self.thin or self._embedding_pending is None else self._embedding_pending.shape
        if shape is None:
            return
        model, dim = shape
        try:
            self._by_words = {
                "notes": diary.by_words(seat=self.seat, model=model, dim=dim, query=self.request.ask, now=self.now),
                "episodes": episode_search.by_words(seat=self.seat, model=model, dim=dim, query=self.request.ask),
            }
        except DatabaseError:  # each search ranks its own words again, and reports its own failure
            log.warning("ranking by words failed for %s", self.seat.handle, exc_info=True)

    def ranked_words(self, name: str) -> list[tuple[int, float]] | None:
        """``rank_by_words``'s ranking of ``notes`` or ``episodes``, when the vector came back of the model and
        width they were ranked for; None otherwise (the search then ranks them itself)."""
        e, sent = self._embedding, self._embedding_pending
        if e is None or e.vector is None or sent is None or sent.shape != (e.model, len(e.vector)):
            return None
        return self._by_words.get(name)

    @property
    def turn_embedding(self) -> str:
        """``embedded`` / ``failed`` / ``unconfigured``, or ``absent`` where no search asked for one."""
        if self._embedding is None:
            return "absent"
        return EMBEDDING_STATUS.get(self._embedding.status, "failed")

    def defer(self, write) -> None:
        """Queue a turn-start write for the prefetch's one transaction: a callable that keeps its own
        failures to itself (a savepoint of its own; a failure logged or announced, never raised)."""
        self._deferred.append(write)

    def announce(self, event) -> None:
        """Queue a turn-start telemetry event: ``commit`` writes them all in one bulk insert."""
        self._announced.append(event)

    def commit(self, first) -> None:
        """The turn start's ONE transaction: ``first()`` (the frozen prefix, whose failure fails it),
        the spend, the deferred writes and the announced events (one bulk insert)."""
        with transaction.atomic(), events.batched():
            first()
            auxiliary.record_attempts(self.seat, tuple(self._attempts))
            for write in self._deferred:
                write()
            events.publish_many([(event, self.seat, self.turn_id) for event in self._announced])

    def charge_alone(self) -> None:
        """For a start that lost the race to freeze its run id: the calls it made were made on the
        seat's behalf, so they are charged all the same; its other writes are the winner's."""
        auxiliary.record_attempts(self.seat, tuple(self._attempts))

    def arm_deadline(self) -> None:
        """Start the one auxiliary deadline, past the recall (the embed has already run)."""
        self.deadline = time.monotonic() + knobs_for_seat(self.seat).learning.turn_start_model_seconds

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def submit(self, purpose: str, inputs: BaseModel | dict, *, max_tokens: int | None = None) -> concurrent.futures.Future:
        """Start one auxiliary call on a worker thread; its spend is recorded by ``collect`` (or, never
        collected, by ``release_uncollected``). ``inputs`` are read into the purpose's model here, on
        the request thread, so inputs it refuses raise to the caller."""
        inputs = purposes.get(purpose).read_inputs(inputs)
        if self.room is None and auxiliary.paid(self.seat):
            self.room = budgets.has_room(self.seat) is not False  # an unreadable counter asks anyway
        future = _pool.submit(
            auxiliary.call,
            seat=self.seat,
            stage="turn",
            purpose=purpose,
            turn_id=self.turn_id,
            inputs=inputs,
            max_tokens=max_tokens,
            defer_record=True,
            deadline=self.deadline or None,
            room=self.room,
        )
        self._uncollected.add(future)
        self._asked[future] = (purpose, inputs)
        return future

    def collect(self, future: concurrent.futures.Future):
        """The call's parsed answer: a model's, or its purpose's offline answer when the shared deadline
        passed (the late call is cancelled, or charged when it returns), the budget refused it or no
        model answered usably; ``AuxDidNotAnswer`` only for a call that raised (no offline floor)."""
        self._uncollected.discard(future)
        purpose, inputs = self._asked.pop(future)
        try:
            result = future.result(timeout=self.remaining() + DEADLINE_GRACE)
        except concurrent.futures.TimeoutError:
            log.warning("prefetch %s for %s: no answer by the deadline; answering offline", purpose, self.seat.handle)
            late_spend.abandon(future)
            self.fallbacks[purpose] = "deadline"
            spec = purposes.get(purpose)
            return spec.parse(spec.offline(inputs))
        except Exception as exc:  # a provider error or an unparseable answer: the block degrades
            log.warning("prefetch auxiliary call for %s failed: %s", self.seat.handle, exc)
            self._attempts.extend(getattr(exc, "attempts", ()))  # charged and recorded all the same
            raise AuxDidNotAnswer(str(exc)) from exc
        self._attempts.extend(result.attempts)  # the spend, charged in the turn start's one transaction
        if result.fallback_kind:
            self.fallbacks[purpose] = result.fallback_kind
        return result.value

    def release_uncollected(self) -> int:
        """Hand every call no block collected to ``late_spend``: never sent, or charged all the same."""
        calls, self._uncollected = self._uncollected, set()
        for future in calls:
            late_spend.abandon(future)
        return len(calls)
