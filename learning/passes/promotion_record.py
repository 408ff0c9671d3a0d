"""What the promotion pass remembers of each draft: its dedup key and the skills it was made from.

A converged cluster is matched to the record it shares the most skills with (each record to one
cluster at most), so a cluster keeps its title — the writer's dedup key — when its oldest skill
is archived and another skill becomes its seed. The record keeps every skill the pass saw in
the cluster while a draft of it existed (the ones it was made from, and the ones that joined while
it waited for review). A record whose page is gone (a lead rejected or deleted the draft) holds
the cluster back until it includes a skill the record never saw: the next tick from the same rows
makes no model call.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.db import DatabaseError

from learning.models import PromotionDraft

log = logging.getLogger("learning.passes.promotion")


def skill_ids(members: Iterable) -> set[int]:
    return {s.pk for s in members}


def records_for(unit) -> list[PromotionDraft]:
    return list(PromotionDraft.objects.filter(unit=unit).order_by("id"))


def match(clusters: list, records: list[PromotionDraft]) -> list[PromotionDraft | None]:
    """Each cluster's record (by the most shared skills; ties to the older record), or None."""
    pairs = sorted(
        ((len(skill_ids(c.members) & set(r.skill_ids)), -r.pk, i, r) for i, c in enumerate(clusters) for r in records),
        key=lambda p: (p[0], p[1]), reverse=True,
    )
    found: list[PromotionDraft | None] = [None] * len(clusters)
    taken: set[int] = set()
    for shared, _order, i, record in pairs:
        if shared and found[i] is None and record.pk not in taken:
            found[i] = record
            taken.add(record.pk)
    return found


def unseen(record: PromotionDraft, members: Iterable) -> set[int]:
    """The cluster's skills the pass never saw in it while a draft of it existed (new evidence)."""
    return skill_ids(members) - set(record.skill_ids)


def remember(unit, *, title: str, page_id: str, members: Iterable, drafted: bool,
             record: PromotionDraft | None = None) -> None:
    """Record (or extend) what the cluster's draft saw; a failed write costs only the memory of it.

    A tick that finds the draft still there and nothing new in the cluster writes nothing.
    """
    ids = skill_ids(members)
    try:
        if record is None:
            record, created = PromotionDraft.objects.get_or_create(
                unit=unit, title=title, defaults={"page_id": page_id, "skill_ids": sorted(ids), "drafts": int(drafted)}
            )
            if created:
                return
        seen = ids | set(record.skill_ids)
        if not drafted and seen == set(record.skill_ids) and (not page_id or page_id == record.page_id):
            return
        record.page_id = page_id or record.page_id
        record.skill_ids = sorted(seen)
        record.drafts += int(drafted)
        record.save(update_fields=["page_id", "skill_ids", "drafts", "updated_at"])
    except DatabaseError:
        log.warning("promotion: what %r saw could not be recorded", title, exc_info=True)
