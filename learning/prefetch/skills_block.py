"""## Synthesized skills you've learned: names and descriptions within a character budget.

Being offered is being used: exactly the skills whose menu line fitted the budget are stamped (a
stamp that cannot be written is published as ``skill_telemetry_write_failed`` by the store); a
skill whose line did not fit was never offered, so its clock does not move. Stale skills are
listed with an ageing marker.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import NamedTuple

from django.db import DatabaseError
from django.db.models import F

from crewlet.models import Seat
from learning.memory import skills
from learning.models import SynthesizedSkill
from learning.prefetch import bounds
from learning.prefetch.blocks import BlockResult, done
from learning.prefetch.turn_state import PrefetchContext

log = logging.getLogger("learning.prefetch")

NAME = "synthesized_skills"
HEADING = "## Synthesized skills you've learned"
PREAMBLE = "Procedures you worked out on earlier turns; load one's full steps with use_skill(name)."
OFFERED = "offered_skill_ids"
STALE_MARK = " (stale: not used for a while; still loadable)"


class MenuEntry(NamedTuple):
    """A skill as the menu and the stamp read it: no body, no model instance."""

    id: int
    name: str
    description: str
    state: str


def menu_line(skill: MenuEntry) -> str:
    description = " ".join(skill.description.split())
    mark = STALE_MARK if skill.state == SynthesizedSkill.STALE else ""
    return f"- {skill.name}: {description}{mark}"


def ordered_catalogue(seat: Seat) -> list[MenuEntry]:
    rows = skills.catalogue(seat).order_by(
        "-pinned", "state", F("last_used_at").desc(nulls_last=True), "-use_count", "name", "id"
    ).values_list(*MenuEntry._fields)
    return [MenuEntry._make(row) for row in rows]


def fit(catalogue: list[MenuEntry], budget: int = bounds.SKILL_CATALOGUE_CHARS):
    """The lines that fit the character budget, in order, and the skills they offer."""
    lines, offered, used = [], [], 0
    for skill in catalogue:
        line = menu_line(skill)
        cost = len(line) + 1
        if used + cost > budget:
            continue
        lines.append(line)
        offered.append(skill)
        used += cost
    return lines, offered


def start(ctx: PrefetchContext):
    try:
        catalogue = ordered_catalogue(ctx.seat)
    except DatabaseError:
        log.warning("skill catalogue unreadable for %s", ctx.seat.handle, exc_info=True)
        return done(BlockResult(NAME, selection_count=0))
    if not catalogue:
        return done(BlockResult(NAME, selection_count=0))
    lines, offered = fit(catalogue)
    if not offered:
        return done(BlockResult(NAME, selection_count=0))
    # the rows just read: the stamp is one UPDATE, and the stale ones among them are the revived
    ctx.defer(partial(skills.stamp_offered, offered, seat=ctx.seat, turn_id=ctx.turn_id, announce=ctx.announce))
    missing = len(catalogue) - len(offered)
    tail = f"\n({missing} more of your skills did not fit here.)" if missing else ""
    text = f"{HEADING}\n{PREAMBLE}\n" + "\n".join(lines) + tail
    ids = [s.id for s in offered]
    return done(BlockResult(NAME, text, selection_count=len(offered), extra={OFFERED: ids}, shown={"skills": ids}))


def offered_ids(results: list[BlockResult]) -> list[int]:
    """The skill ids this turn's prompt offered, in prompt order (what ``POST /turns`` defaults to)."""
    return next((list(r.extra.get(OFFERED) or []) for r in results if r.name == NAME), [])
