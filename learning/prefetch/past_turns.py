"""``learning.PastTurns``: the one renderer of past turns, for ## Similar prior work and query_episodes.

A raw turn is answered with what woke it (woken by), its outcome and tools, what it was asked and
what it did; the ask and the account are each whole up to 600 bytes
(``learning.EpisodeAccountBytes``) and past that condensed by the seat's auxiliary model and marked
as a rewrite, or named by size where no rewrite can be had in time. Every rewrite of one render runs
four at a time under one shared deadline (``condensation.rewrite_all``). A compacted row is answered as
its pattern: the dates it spans, how many turns it stands for, how many ended done, what varied.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from learning import limits
from learning.memory import condensation
from learning.models import Episode

if TYPE_CHECKING:
    from crewlet.models import Seat

BLOCK_LABELS = {"woken": "Woken by:", "asked": "Asked:", "did": "What it did:"}
TOOL_LABELS = {"woken": "woken by:", "asked": "asked:", "did": "what it did:"}


@dataclass(frozen=True)
class PastTurn:
    turn_id: str
    kind: str
    text: str
    exemplar_turn_ids: tuple[str, ...] = ()


def _day(value) -> str:
    return value.date().isoformat() if value else "undated"


def _one_line(text: str) -> str:
    return " ".join((text or "").split())


def _header(episode: Episode, labels: dict) -> str:
    tools = ", ".join(dict.fromkeys(episode.tool_sequence or [])) or "none"
    outcome = episode.review_outcome or "outcome unknown"
    woken = _one_line(episode.task_summary) or "(no label recorded)"
    return f"- {_day(episode.ended_at)} · {labels['woken']} {woken} · {outcome} · tools: {tools}"


def compacted_text(episode: Episode) -> str:
    """A compacted row as its pattern, count, outcome tally and variations: never as one turn."""
    span = f"{_day(episode.started_at)} to {_day(episode.ended_at)}"
    if episode.success_rate is None:
        tally = "how many ended done is unknown"
    else:
        tally = f"{round(episode.success_rate * episode.count)} ended done"
    parts = [f"- {span} · a pattern of {episode.count} turns, {tally}"]
    pattern = _one_line(episode.common_task_pattern) or _one_line(episode.task_summary)
    if pattern:
        parts.append(f"pattern: {pattern}")
    if episode.common_outcome:
        parts.append(f"usually: {_one_line(episode.common_outcome)}")
    if episode.notable_patterns:
        parts.append(f"what varied: {_one_line(episode.notable_patterns)}")
    return " · ".join(parts)


def render(
    *,
    seat: Seat,
    episodes: list[Episode],
    turn_id: str = "",
    stage: str = "turn",
    labels: dict = TOOL_LABELS,
    deadline: float | None = None,
) -> list[PastTurn]:
    """Render every turn of one answer; all its rewrites share ONE deadline."""
    deadline = deadline if deadline is not None else time.monotonic() + limits.EPISODE_REWRITE_TIMEOUT
    raw = [e for e in episodes if e.kind != Episode.COMPACTED]
    texts: list[str] = []
    for episode in raw:
        texts.extend([episode.ask or "", episode.plan_summary or ""])
    rewritten = iter(
        condensation.rewrite_all(
            seat=seat,
            texts=texts,
            max_bytes=limits.EPISODE_ACCOUNT_BYTES,
            stage=stage,
            turn_id=turn_id,
            kind="what an agent was asked, or its account of what it did",
            deadline=deadline,
        )
    )
    condensed = {e.pk: (next(rewritten), next(rewritten)) for e in raw}
    out = []
    for episode in episodes:
        if episode.kind == Episode.COMPACTED:
            out.append(PastTurn("", episode.kind, compacted_text(episode), tuple(episode.exemplar_turn_ids or ())))
            continue
        asked, did = condensed[episode.pk]
        lines = [_header(episode, labels)]
        if episode.ask.strip():  # a turn that was told nothing shows no ask
            lines.append(f"  {labels['asked']} {_one_line(asked.render())}")
        lines.append(f"  {labels['did']} {_one_line(did.render()) if episode.plan_summary.strip() else '(no account recorded)'}")
        if episode.run_id:
            lines.append(f"  turn: {episode.run_id}")
        out.append(PastTurn(episode.run_id, episode.kind, "\n".join(lines)))
    return out
