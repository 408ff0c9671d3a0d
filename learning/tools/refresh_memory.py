"""``refresh_memory``: re-pick your notes for the task as you now understand it.

Re-runs the relevance filter — and the similarity half of its pool — against the executor's own
``context_hint``, told who triggered the turn exactly as the turn-start filter was. Bounded per run
id (``RefreshLedger``): at most ``learning.personal_memory.max_refreshes_per_turn`` filter calls; a
repeat of a hint (case- and whitespace-normalised) is answered from the ledger for free, a larger
limit getting the extra rows; a failed filter call still spends its slot (retrying it re-runs the
filter), and a call with no note to pick from makes no filter call and spends none. State is per
run, kept for the seat's most recent 256 runs.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from django.db import DatabaseError, transaction
from django.utils import timezone
from pydantic import Field

from core import auxiliary
from core.providers.embeddings import embed_one_beside
from core.providers.embeddings.base import PREFETCH_EMBED_BUDGET
from core.providers.errors import ProviderError
from core.purposes import AnswerUnparseable
from crewlet import config
from crewlet.errors import BadInput
from learning.intake import prefetch_snapshots
from learning.memory import diary
from learning.models import RefreshLedger
from learning.prefetch import bounds
from learning.prefetch.personal_memory import PURPOSE, filter_inputs, render_notes, selected_ids
from learning.tools.base import Arguments, Text, Tool, ToolCall, ToolResult

if TYPE_CHECKING:
    from crewlet.models import Seat

log = logging.getLogger("learning.tools")

DEFAULT_LIMIT = bounds.MEMORY_BLOCK_NOTES
CAP_KNOB = "learning.personal_memory.max_refreshes_per_turn"


class RefreshMemoryArgs(Arguments):
    context_hint: Text = Field(..., min_length=1, max_length=8000,
                               description="Your own account of what the task is about, now that recon has told you.")
    limit: int = Field(DEFAULT_LIMIT, ge=1, le=bounds.MEMORY_FILTER_MAX_SELECTED, description="How many notes to return.")


def normalise(hint: str) -> str:
    return " ".join(hint.lower().split())


def ledger_for(*, seat: Seat, run_id: str) -> RefreshLedger:
    row, created = RefreshLedger.objects.get_or_create(seat=seat, run_id=run_id, defaults={"hints": {}})
    if created:
        bound_ledgers(seat)
    return row


def bound_ledgers(seat: Seat) -> None:
    """The seat's most recent 256 runs' state: a cache, not a leak (nothing says when a turn ended).

    Per seat: a busy seat never resets a quiet seat's spent refreshes mid-turn.
    """
    keep = bounds.FROZEN_RUNS_KEPT
    mine = RefreshLedger.objects.filter(seat=seat)
    cutoff = list(mine.order_by("-id").values_list("id", flat=True)[keep : keep + 1])
    if cutoff:
        mine.filter(id__lte=cutoff[0]).delete()


def spend_slot(*, ledger: RefreshLedger, cap: int) -> tuple[bool, int]:
    """Take one slot: (taken, the count spent after it); not taken once the cap is reached."""
    with transaction.atomic():
        row = RefreshLedger.objects.select_for_update().get(pk=ledger.pk)
        if row.spent >= cap:
            return False, row.spent
        row.spent += 1
        row.save(update_fields=["spent", "updated_at"])
        return True, row.spent


def remember(*, ledger: RefreshLedger, key: str, ids: list[int], shown: int) -> None:
    with transaction.atomic():
        row = RefreshLedger.objects.select_for_update().get(pk=ledger.pk)
        row.hints = {**row.hints, key: {"ids": ids, "shown": shown}}
        row.save(update_fields=["hints", "updated_at"])


def triggered_by(*, seat: Seat, run_id: str) -> list[str]:
    """Who triggered the seat's turn, as the turn-start filter was told (frozen with its prefix)."""
    rendered = prefetch_snapshots.stored(seat_id=seat.pk, run_id=run_id) or {}
    return list(rendered.get("triggered_by") or [])


def candidate_pool(call: ToolCall[RefreshMemoryArgs], hint: str) -> list:
    """The notes' pool for ``hint``; the notes are ranked by its words while it embeds."""
    now = timezone.now()
    embedded, ranked_words = embed_one_beside(
        hint, lambda model, dim: diary.by_words(seat=call.seat, model=model, dim=dim, query=hint, now=now),
        budget=PREFETCH_EMBED_BUDGET)
    return diary.candidates(seat=call.seat, vector=embedded.vector, model=embedded.model, query=hint, now=now,
                            ranked_words=ranked_words)


def run_filter(call: ToolCall[RefreshMemoryArgs], hint: str, pool: list) -> list[int]:
    result = auxiliary.call(seat=call.seat, stage="turn", purpose=PURPOSE, turn_id=call.run_id,
                      inputs=filter_inputs(query=hint, triggered_by=triggered_by(seat=call.seat, run_id=call.run_id), candidates=pool))
    return selected_ids(result.value, pool)


def answer(*, ledger: RefreshLedger, key: str, cached: dict, limit: int, repeat: bool) -> ToolResult:
    live = {e.id: e for e in diary.live(ledger.seat).filter(id__in=cached["ids"])}
    rows = [live[i] for i in cached["ids"] if i in live][:limit]
    fresh = [e.id for e in rows[cached.get("shown", 0):]]
    diary.mark_used(fresh)  # a use is counted once per note per hint, when it is first shown
    if len(rows) > cached.get("shown", 0):
        remember(ledger=ledger, key=key, ids=cached["ids"], shown=len(rows))
    note = " (answered from this turn's earlier refresh with the same hint; no refresh spent)" if repeat else ""
    if not rows:
        return ToolResult(ok=True, text=f"Nothing in your notes bears on this.{note}",
                          data={"entry_ids": [], "repeat": repeat})
    text = f"Your notes that bear on this, most relevant first{note}:\n{render_notes(rows)}"
    return ToolResult(ok=True, text=text, data={"entry_ids": [e.id for e in rows], "repeat": repeat})


def refused(spent: int, cap: int) -> ToolResult:
    return ToolResult(ok=False, data={"spent": spent, "cap": cap, "refused": True}, text=(
        f"refresh_memory refused: this turn has spent {spent} of its {cap} refreshes ({CAP_KNOB}). "
        "A hint you already used is still answered; work with the notes you have."))


def handle(call: ToolCall[RefreshMemoryArgs]) -> ToolResult:
    hint, limit = call.args.context_hint, call.args.limit
    key = normalise(hint)
    if not key:
        raise BadInput("arguments.context_hint: the hint has no words in it", field="arguments.context_hint")
    ledger = ledger_for(seat=call.seat, run_id=call.run_id)
    cached = ledger.hints.get(key)
    if cached is not None:
        return answer(ledger=ledger, key=key, cached=cached, limit=limit, repeat=True)
    cap = config.knobs_for_seat(call.seat).learning.personal_memory.max_refreshes_per_turn
    if ledger.spent >= cap:
        return refused(ledger.spent, cap)
    try:
        pool = candidate_pool(call, hint)
    except DatabaseError as exc:
        log.warning("refresh_memory could not read the notes of %s: %s", call.seat.handle, exc)
        return ToolResult(ok=False, data={"spent": ledger.spent, "cap": cap, "failed": True}, text=(
            f"Your notes could not be read ({exc}); no refresh spent. Retrying the same hint tries again."))
    if not pool:  # nothing to filter: no call is made, so no slot is spent
        return ToolResult(ok=True, text="You have no notes to pick from yet; no refresh spent.",
                          data={"entry_ids": [], "repeat": False, "spent": ledger.spent, "cap": cap})
    taken, spent = spend_slot(ledger=ledger, cap=cap)
    if not taken:
        return refused(spent, cap)
    try:
        ids = run_filter(call, hint, pool)
    except (ProviderError, AnswerUnparseable, DatabaseError) as exc:
        log.warning("refresh_memory filter failed for %s: %s", call.seat.handle, exc)
        return ToolResult(ok=False, data={"spent": spent, "cap": cap, "failed": True}, text=(
            f"The relevance filter could not answer ({exc}); this refresh spent its slot ({spent} of {cap} spent). "
            "Retrying the same hint runs the filter again."))
    remember(ledger=ledger, key=key, ids=ids, shown=0)
    result = answer(ledger=ledger, key=key, cached={"ids": ids, "shown": 0}, limit=limit, repeat=False)
    return ToolResult(ok=True, text=result.text, data={**result.data, "spent": spent, "cap": cap})


TOOL = Tool(
    name="refresh_memory",
    description="Re-pick your own notes for the task as you now understand it; call it after any tool result that "
    "materially changed your understanding, even when the Personal memory block already had entries.",
    arguments=RefreshMemoryArgs,
    handler=handle,
    needs_run_id=True,
)
