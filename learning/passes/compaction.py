"""Compaction, the lifecycle's centerpiece: fold clusters of old settled turns into one summary row.

The oldest ``compaction_batch_size`` raw turns past ``compaction_min_age_days`` that a fold could
take (settled, tool-using, not a retained exemplar, not awaiting a skill's grace) are greedily
clustered by tool-sequence Jaccard; each cluster of at least ``compaction_min_cluster_size`` is
described by the seat's own auxiliary chain (Purpose ``compaction_summary``) and written as one
``kind='compacted'`` row, keeping two or three members raw as exemplars and deleting the rest.
A member's task or outcome past 280 bytes is condensed first and labelled, never cut; one whose
rewrite fails is carried whole.
"""

from __future__ import annotations

import logging
from collections import Counter
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.db import transaction

from core import auxiliary, events
from core.providers.errors import ProviderError
from core.purposes import AnswerUnparseable
from learning import limits, procedures
from learning.events import CompactionRequested
from learning.memory import condensation
from learning.models import Episode
from learning.passes.clustering import Cluster, greedy_clusters
from learning.purposes import compaction_summary
from learning.purposes.compaction_summary import NAME as COMPACTION_SUMMARY

if TYPE_CHECKING:
    from crewlet.models import Seat

log = logging.getLogger("learning.passes.compaction")

TERMINAL_OUTCOMES = ("done", "failed")
COMPACTION_JACCARD_THRESHOLD = 0.6  # the spec names none for compaction; clustered synthesis's default
MIN_EXEMPLARS, MAX_EXEMPLARS = 2, 3
THREE_EXEMPLARS_FROM = 6  # a cluster this large keeps three exemplars, a smaller one two
CONDENSE_KIND = "the task or the outcome of one of an agent's past turns"


def candidates(seat: Seat, knobs, now: datetime) -> list[Episode]:
    """The oldest raw turns a fold could take; tool-free turns and exemplars never take a slot."""
    return list(
        Episode.objects.filter(
            seat=seat,
            kind=Episode.RAW,
            ended_at__lte=now - timedelta(days=knobs.compaction_min_age_days),
            review_outcome__in=TERMINAL_OUTCOMES,
            is_exemplar=False,
            consolidated_into_skill__isnull=True,
        )
        .exclude(tool_sequence=[])
        .order_by("started_at", "id")[: knobs.compaction_batch_size]
    )


def exemplars(cluster: Cluster) -> list[Episode]:
    """The members most like the rest (done before failed, then newest) stay raw as anchors."""
    members = cluster.members
    k = MAX_EXEMPLARS if len(members) >= THREE_EXEMPLARS_FROM else MIN_EXEMPLARS

    def closeness(e: Episode) -> float:
        return sum(procedures.jaccard(e.tool_sequence, o.tool_sequence) for o in members if o is not e)

    ranked = sorted(members, key=lambda e: (e.review_outcome == "done", closeness(e), e.ended_at, e.id), reverse=True)
    return ranked[:k]


def turn_ref(episode: Episode) -> str:
    return episode.run_id or f"episode-{episode.pk}"


def task_of(episode: Episode) -> str:
    ask = episode.ask.strip()
    return f"{episode.task_summary.strip()} — {ask}" if ask else episode.task_summary.strip()


def member_inputs(seat: Seat, members: list[Episode]) -> tuple[list[dict], int]:
    """Each member as task, outcome, tools and date; long texts condensed first (labelled)."""
    texts = [t for e in members for t in (task_of(e), e.plan_summary.strip())]
    rewritten = condensation.rewrite_all(
        seat=seat, texts=texts, max_bytes=limits.COMPACTION_CONDENSE_BYTES, stage="background", kind=CONDENSE_KIND
    )
    shown, condensed = [], 0
    for i, episode in enumerate(members):
        pair = []
        for original, r in zip(texts[2 * i : 2 * i + 2], rewritten[2 * i : 2 * i + 2], strict=True):
            if r.mode == "rewrite":
                condensed += 1
                pair.append(r.render())
            else:  # whole, or a rewrite that failed: carried whole, never cut
                pair.append(original)
        shown.append(
            {
                "task": pair[0],
                "outcome": pair[1],
                "ended": episode.review_outcome,
                "tools": list(episode.tool_sequence),
                "date": episode.ended_at.date().isoformat(),
            }
        )
    return shown, condensed


# ---- the fold ------------------------------------------------------------------------------------


def fold(seat: Seat, cluster: Cluster) -> dict:
    """Summarise one cluster and write it; the originals stay raw when the summary cannot be had."""
    members = sorted(cluster.members, key=lambda e: (e.started_at, e.id))
    kept = exemplars(cluster)
    events.publish(CompactionRequested(cluster_size=len(members), exemplars=[turn_ref(e) for e in kept]), seat=seat)
    shown, condensed = member_inputs(seat, members)
    try:
        summary: compaction_summary.Answer = auxiliary.call(
            seat=seat, stage="background", purpose=COMPACTION_SUMMARY,
            inputs=compaction_summary.Inputs(members=shown),
        ).value
    except (ProviderError, AnswerUnparseable) as exc:
        log.warning("compaction of %d turns for %s failed: %s", len(members), seat.handle, exc)
        return {"folded": False, "cluster_size": len(members), "why": f"{type(exc).__name__}: {exc}", "condensed": condensed}
    compacted = write_fold(seat, members, kept, summary)
    return {"folded": True, "compacted_id": compacted.id, "cluster_size": len(members), "condensed": condensed,
            "deleted": len(members) - len(kept), "exemplars": len(kept)}


def write_fold(seat: Seat, members: list[Episode], kept: list[Episode],
               summary: compaction_summary.Answer) -> Episode:
    outcomes = Counter(e.review_outcome for e in members)
    done = outcomes.get("done", 0)
    with transaction.atomic():
        compacted = Episode.objects.create(
            seat=seat,
            kind=Episode.COMPACTED,
            count=len(members),
            task_summary=summary.common_task_pattern,
            plan_summary=summary.common_outcome,
            tool_sequence=list(kept[0].tool_sequence),
            review_outcome=outcomes.most_common(1)[0][0],
            started_at=min(e.started_at for e in members),
            ended_at=max(e.ended_at for e in members),
            common_task_pattern=summary.common_task_pattern,
            common_outcome=summary.common_outcome,
            success_rate=done / len(members),
            subjects_involved=summary.subjects_involved,
            notable_patterns=summary.notable_patterns,
            exemplar_turn_ids=[turn_ref(e) for e in kept],
        )
        kept_ids = [e.id for e in kept]
        Episode.objects.filter(id__in=kept_ids).update(is_exemplar=True)
        Episode.objects.filter(id__in=[e.id for e in members if e.id not in kept_ids]).delete()
    return compacted


def compact_seat(seat: Seat, knobs, now: datetime, *, dry_run: bool = False) -> dict:
    """Cluster the batch and fold each large-enough cluster (a dry run only counts them)."""
    batch = candidates(seat, knobs, now)
    due = [c for c in greedy_clusters(batch, COMPACTION_JACCARD_THRESHOLD) if len(c.members) >= knobs.compaction_min_cluster_size]
    report = {"batch": len(batch), "clusters": len(due), "folded": 0, "failed": 0,
              "episodes_compacted": 0, "condensed": 0}
    if dry_run:
        report["episodes_compacted"] = sum(len(c.members) for c in due)
        return report
    for cluster in due:
        outcome = fold(seat, cluster)
        report["condensed"] += outcome["condensed"]
        if outcome["folded"]:
            report["folded"] += 1
            report["episodes_compacted"] += outcome["cluster_size"]
        else:
            report["failed"] += 1
    return report
