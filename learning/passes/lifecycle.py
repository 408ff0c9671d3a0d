"""The episode lifecycle: a threshold-gated pass that applies four horizons to four row states.

Per seat, ONE indexed count of its raw rows decides whether the pass runs at all ("not yet" is
the common answer and must cost one query). A seat over ``max_raw_episodes_per_agent`` gets:
non-terminal turns dropped after ``non_terminal_max_age_days``; tool-free turns after
``tool_free_max_age_days`` (reported alone as ``tool_free_dropped``: the one irrecoverable
sweep); skill-consolidated turns after ``consolidated_grace_days``; compaction of the rest
(``compaction.py``); and, when ``compacted_max_age_days`` is set, eviction of ancient summaries
with their exemplars. With no auxiliary model configured anywhere the pass does not run: what it
could still do is delete, the half an operator least wants unsupervised.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from core import auxiliary, events
from crewlet import config
from crewlet.models import Seat
from learning.events import CompactionCompleted, EpisodeLifecyclePass
from learning.models import Episode
from learning.passes import compaction, cursor

log = logging.getLogger("learning.passes.lifecycle")

COUNTS = ("non_terminal_dropped", "tool_free_dropped", "consolidated_dropped", "clusters_folded",
          "compaction_failed", "episodes_compacted", "condensed", "compacted_evicted", "exemplars_evicted")


def raw_count(seat: Seat) -> int:
    """The gate: one count(*) over the (seat, kind, started_at) index."""
    return Episode.objects.filter(seat=seat, kind=Episode.RAW).count()


def non_terminal(seat: Seat, knobs, now: datetime) -> QuerySet:
    return Episode.objects.filter(
        seat=seat, kind=Episode.RAW, ended_at__lte=now - timedelta(days=knobs.non_terminal_max_age_days)
    ).exclude(review_outcome__in=compaction.TERMINAL_OUTCOMES)


def tool_free(seat: Seat, knobs, now: datetime) -> QuerySet:
    return Episode.objects.filter(
        seat=seat, kind=Episode.RAW, tool_sequence=[], ended_at__lte=now - timedelta(days=knobs.tool_free_max_age_days)
    )


def consolidated(seat: Seat, knobs, now: datetime) -> QuerySet:
    """Absorbed into a skill, past the grace that lets an operator audit the consolidation."""
    cutoff = now - timedelta(days=knobs.consolidated_grace_days)
    return Episode.objects.filter(seat=seat, kind=Episode.RAW, consolidated_into_skill__isnull=False).filter(
        Q(consolidated_at__lte=cutoff) | Q(consolidated_at__isnull=True, ended_at__lte=cutoff)
    )


def ancient_compacted(seat: Seat, knobs, now: datetime) -> QuerySet:
    if knobs.compacted_max_age_days <= 0:
        return Episode.objects.none()
    return Episode.objects.filter(
        seat=seat, kind=Episode.COMPACTED, ended_at__lte=now - timedelta(days=knobs.compacted_max_age_days)
    )


def _drop(queryset: QuerySet) -> int:
    with transaction.atomic():
        return queryset.delete()[0]


def evict(seat: Seat, knobs, now: datetime) -> tuple[int, int]:
    """Evict summaries past ``compacted_max_age_days`` and the exemplars they kept raw."""
    rows = list(ancient_compacted(seat, knobs, now).values_list("id", "exemplar_turn_ids"))
    refs = {ref for _id, ids in rows for ref in (ids or [])}
    pks = {int(r.removeprefix("episode-")) for r in refs if r.startswith("episode-") and r[8:].isdigit()}
    anchors = Episode.objects.filter(seat=seat, kind=Episode.RAW, is_exemplar=True).filter(
        Q(run_id__in=refs - {""}) | Q(pk__in=pks)
    )
    if not rows:
        return 0, 0
    with transaction.atomic():
        exemplars = anchors.delete()[0]
        compacted = Episode.objects.filter(id__in=[r[0] for r in rows]).delete()[0]
    return compacted, exemplars


def lifecycle_for_seat(seat: Seat, *, now: datetime, dry_run: bool = False) -> dict:
    """The gate, then (when due) the four actions and eviction, for one seat."""
    knobs = config.knobs_for_seat(seat).learning.episode_lifecycle
    if not knobs.enabled:
        return {"seat": seat.handle, "due": False, "why": "episode_lifecycle.enabled is false"}
    count = raw_count(seat)
    if count <= knobs.max_raw_episodes_per_agent:
        return {"seat": seat.handle, "due": False, "raw": count}
    report = {"seat": seat.handle, "due": True, "raw": count, **dict.fromkeys(COUNTS, 0)}
    if dry_run:  # the same deletes, counted and rolled back; compaction counts its clusters, calls nothing
        with transaction.atomic():
            _actions(seat, knobs, now, report, dry_run=True)
            transaction.set_rollback(True)
        return report
    _actions(seat, knobs, now, report, dry_run=False)
    _completed(seat, report)
    return report


def _actions(seat: Seat, knobs, now: datetime, report: dict, *, dry_run: bool) -> None:
    report["non_terminal_dropped"] = _drop(non_terminal(seat, knobs, now))
    report["tool_free_dropped"] = _drop(tool_free(seat, knobs, now))
    report["consolidated_dropped"] = _drop(consolidated(seat, knobs, now))
    if not auxiliary.available(seat):
        report["compaction_skipped"] = "the seat has no auxiliary model"
    else:  # a background pass: every call is charged, but the room left is not read (spec spend table)
        folded = compaction.compact_seat(seat, knobs, now, dry_run=dry_run)
        report.update(clusters_folded=folded["folded"], compaction_failed=folded["failed"],
                      episodes_compacted=folded["episodes_compacted"], condensed=folded["condensed"],
                      compaction_batch=folded["batch"], clusters_due=folded["clusters"])
    report["compacted_evicted"], report["exemplars_evicted"] = evict(seat, knobs, now)


def _completed(seat: Seat, report: dict) -> None:
    # the spec's CompactionCompleted folds the tool-free sweep into non_terminal_dropped;
    # episode_lifecycle_pass is the one place tool_free_dropped is visible alone
    events.publish(
        CompactionCompleted(
            clusters_folded=report["clusters_folded"],
            episodes_compacted=report["episodes_compacted"],
            non_terminal_dropped=report["non_terminal_dropped"] + report["tool_free_dropped"],
            consolidated_dropped=report["consolidated_dropped"],
            compacted_evicted=report["compacted_evicted"],
        ),
        seat=seat,
    )


def any_auxiliary_model(seats) -> bool:
    return any(auxiliary.available(s) for s in seats)


def run_lifecycle(*, seat: Seat | None = None, now: datetime | None = None, dry_run: bool = False, progress=None) -> dict:
    """One pass over every active seat (or one); publishes ``episode_lifecycle_pass`` with all counts."""
    now = now or timezone.now()
    seats = [seat] if seat is not None else list(Seat.objects.filter(active=True).select_related("role", "company"))
    if not any_auxiliary_model(seats):
        return {"ran": False, "why": "no auxiliary model is configured anywhere; episodes stay raw"}
    results = []
    # the scheduled pass resumes after the seat a killed tick was on, and takes that seat last
    walk = cursor.walk("lifecycle", seats) if seat is None and not dry_run else seats
    for s in walk:
        try:
            results.append(lifecycle_for_seat(s, now=now, dry_run=dry_run))
        except Exception as exc:  # one seat's failure never costs the others their pass
            log.exception("episode lifecycle failed for %s", s.handle)
            results.append({"seat": s.handle, "due": True, "error": f"{type(exc).__name__}: {exc}"})
        if progress:
            progress(1, s.handle)
    due = [r for r in results if r.get("due")]
    totals = {k: sum(r.get(k, 0) for r in due) for k in COUNTS}
    report = {"ran": True, "dry_run": dry_run, "seats": len(results), "seats_due": len(due), **totals,
              "results": results}
    if not dry_run:
        events.publish(EpisodeLifecyclePass(seats=len(results), seats_due=len(due), **totals,
                                            per_seat=[{k: v for k, v in r.items() if k != "due"} for r in due]))
    return report
