"""One turn as a lead reads it: what its turn start rendered (and which memory rows were in it), what it wrote.

The rendered blocks come from the turn's frozen prefetch snapshot (kept for the latest runs only,
``bounds.FROZEN_RUNS_KEPT``); each block names the notes, past turns, episodes and skills it showed.
A row deleted since (a forgotten note) is listed as gone, not hidden.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core import events
from crewlet.errors import NotFound
from learning.events import ReflectionCompleted
from learning.models import DiaryEntry, Episode, PrefetchSnapshot, SynthesizedSkill, Turn

if TYPE_CHECKING:
    from crewlet.models import Seat


@dataclass
class ShownBlock:
    name: str
    text: str
    hit: bool
    bytes: int
    notes: list = field(default_factory=list)  # (id, DiaryEntry or None)
    episodes: list = field(default_factory=list)
    skills: list = field(default_factory=list)
    turns: list = field(default_factory=list)  # run ids


def _rows(model, ids, seat: Seat) -> list:
    found = {r.pk: r for r in model.objects.filter(pk__in=ids, seat=seat)}
    return [(i, found.get(i)) for i in ids]


def blocks_of(snapshot: PrefetchSnapshot | None) -> list[ShownBlock]:
    if snapshot is None:
        return []
    out = []
    for b in snapshot.rendered.get("blocks") or []:
        shown = b.get("shown") or {}
        out.append(ShownBlock(
            name=b.get("name", ""), text=b.get("text", ""), hit=bool(b.get("hit")), bytes=int(b.get("bytes") or 0),
            notes=_rows(DiaryEntry, shown.get("notes") or [], snapshot.seat),
            episodes=_rows(Episode, shown.get("episodes") or [], snapshot.seat),
            skills=_rows(SynthesizedSkill, shown.get("skills") or [], snapshot.seat),
            turns=list(shown.get("turns") or []),
        ))
    return out


def turn_context(*, seat: Seat, run_id: str) -> dict:
    turn = Turn.objects.filter(seat=seat, run_id=run_id).first()
    snapshot = PrefetchSnapshot.objects.filter(seat=seat, run_id=run_id).first()
    if turn is None and snapshot is None:
        raise NotFound(f"seat {seat.handle} has no turn {run_id!r} (stored turn or turn-start snapshot)")
    reflection = next(iter(events.recorded(ReflectionCompleted, seat=seat, turn_id=run_id)), None)
    return {
        "seat": seat,
        "run_id": run_id,
        "turn": turn,
        "ask": (turn.payload or {}).get("ask", "") if turn else (snapshot.rendered.get("ask", "") if snapshot else ""),
        "snapshot": snapshot,
        "blocks": blocks_of(snapshot),
        "notes_written": DiaryEntry.objects.filter(seat=seat, turn_id=run_id).order_by("created_at"),
        "episodes_written": Episode.objects.filter(seat=seat, run_id=run_id),
        "reflection": reflection,
    }
