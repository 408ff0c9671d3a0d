"""Clustered synthesis: the shape a seat arrives at over a fortnight, drafted from repetition.

Daily, per seat: the last ``episode_fetch_limit`` raw settled turns with at least
``min_tool_calls`` tools, greedy-clustered by tool-sequence Jaccard at
``cluster_jaccard_threshold``; one draft per seat per pass from the largest cluster of at least
``cluster_min_size`` the seat has not already learned (skipped at ``duplicate_jaccard_threshold``,
stricter on purpose: pooling asks "the same kind of work", rejecting asks "the same skill"). The
stored tool_sequence is the cluster's representative, a run that actually happened. The pass is
scheduled elsewhere (``scheduler_enabled``); this module is the pass itself.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from django.utils import timezone

from core import auxiliary, events
from crewlet import config
from crewlet.models import Seat
from learning import procedures
from learning.events import SkillSynthesized
from learning.memory import skills
from learning.models import Episode
from learning.purposes import skill_draft
from learning.purposes.describe import TurnInputs
from learning.reflection.workers.synthesizer import duplicate_of, write_draft

log = logging.getLogger("learning.passes.clustering")

EXAMPLES_SHOWN = 5  # members shown to the model; the cluster's size is stated, not enumerated


@dataclass
class Cluster:
    representative: Episode
    members: list[Episode] = field(default_factory=list)

    @property
    def size(self) -> int:
        return len(self.members)


def evidence(seat: Seat, knobs) -> list[Episode]:
    """The seat's last ``episode_fetch_limit`` raw settled turns, then those with enough tools."""
    rows = list(
        Episode.objects.filter(seat=seat, kind=Episode.RAW, review_outcome__in=("done", "failed"))
        .order_by("-ended_at", "-id")[: knobs.episode_fetch_limit]
    )
    # distinct work tools, as inline
    return [e for e in rows if len(set(procedures.procedure(e.tool_sequence))) >= knobs.min_tool_calls]


def greedy_clusters(episodes: list[Episode], threshold: float) -> list[Cluster]:
    """Each turn joins the first cluster whose representative it is alike to, or starts its own."""
    clusters: list[Cluster] = []
    for episode in episodes:
        for cluster in clusters:
            if procedures.jaccard(episode.tool_sequence, cluster.representative.tool_sequence) >= threshold:
                cluster.members.append(episode)
                break
        else:
            clusters.append(Cluster(representative=episode, members=[episode]))
    return sorted(clusters, key=lambda c: -c.size)  # stable: the most recent representative first on a tie


def _skip(seat: Seat, knobs) -> str | None:
    if seat.role is None:
        return "no_role"
    if not seat.role.learns or not knobs.learning.enabled or not knobs.learning.skill_synthesis.enabled:
        return "learning_off"
    if skills.at_cap(seat, knobs.learning.skill_synthesis.max_skills_per_agent):
        return "max_skills_per_agent"
    if not auxiliary.available(seat):
        return "no_auxiliary_model"
    return None


def _inputs(seat: Seat, cluster: Cluster) -> skill_draft.Inputs:
    return skill_draft.Inputs(
        mode="cluster",
        seat=seat.handle,
        cluster_size=cluster.size,
        tool_sequence=procedures.procedure(cluster.representative.tool_sequence),  # the steps of its work
        members=[
            TurnInputs(woken_by=e.task_summary, asked=e.ask, what_it_did=e.plan_summary, outcome=e.review_outcome,
                       tool_sequence=procedures.procedure(e.tool_sequence))
            for e in cluster.members[:EXAMPLES_SHOWN]
        ],
        existing_skills=[s.name for s in skills.catalogue(seat)],
    )


def synthesize_for_seat(seat: Seat, *, now=None, dry_run: bool = False) -> dict:
    """At most one model call and one draft for one seat."""
    knobs = config.knobs_for_seat(seat)
    why = _skip(seat, knobs)
    if why:
        return {"seat": seat.handle, "drafted": False, "why": why}
    s = knobs.learning.skill_synthesis
    learned = 0
    for cluster in greedy_clusters(evidence(seat, s), s.cluster_jaccard_threshold):
        if cluster.size < s.cluster_min_size:
            break
        if duplicate_of(seat, cluster.representative.tool_sequence, s.duplicate_jaccard_threshold):
            learned += 1  # already learned: skipped, not a stop
            continue
        if dry_run:  # what the drafter would be offered, without asking it
            return {"seat": seat.handle, "drafted": False, "why": "dry_run", "already_learned": learned,
                    "would_offer": {"cluster_size": cluster.size,
                                    "tools": procedures.procedure(cluster.representative.tool_sequence),
                                    "turns": [e.run_id for e in cluster.members[:EXAMPLES_SHOWN]]}}
        return _draft(seat, cluster, now=now or timezone.now()) | {"already_learned": learned}
    return {"seat": seat.handle, "drafted": False, "why": "no_cluster", "already_learned": learned}


def _draft(seat: Seat, cluster: Cluster, *, now) -> dict:
    draft: skill_draft.Draft = auxiliary.call(seat=seat, stage="background", purpose=skill_draft.NAME,
                                              inputs=_inputs(seat, cluster)).value
    skill, why = write_draft(
        seat=seat, draft=draft, tool_sequence=procedures.procedure(cluster.representative.tool_sequence),
        trigger="clustered", now=now,
    )
    if skill is None:
        return {"seat": seat.handle, "drafted": False, "why": why, "cluster_size": cluster.size}
    Episode.objects.filter(id__in=[e.id for e in cluster.members]).update(
        consolidated_into_skill=skill, consolidated_at=now
    )
    # no turn_id: the draft came from a group, and naming one member explains none of the others
    events.publish(
        SkillSynthesized(trigger="clustered", cluster_size=cluster.size, skill_id=skill.pk, name=skill.name,
                         tool_sequence=skill.tool_sequence),
        seat=seat,
    )
    return {"seat": seat.handle, "drafted": True, "skill_id": skill.pk, "name": skill.name, "cluster_size": cluster.size}


def run_clustered_synthesis(*, seat: Seat | None = None, now=None, dry_run: bool = False) -> dict:
    """One pass: every active seat (or one), at most one draft each; a seat that fails is reported. A dry run
    asks no model and writes nothing: it reports the cluster each seat's drafter would be offered."""
    seats = [seat] if seat is not None else list(Seat.objects.filter(active=True).select_related("role", "company"))
    results = []
    for s in seats:
        try:
            results.append(synthesize_for_seat(s, now=now, dry_run=dry_run))
        except Exception as exc:  # one seat's failure never costs the others their pass
            log.exception("clustered synthesis failed for %s", s.handle)
            results.append({"seat": s.handle, "drafted": False, "why": f"error: {type(exc).__name__}: {exc}"})
    drafted = [r for r in results if r.get("drafted")]
    report = {"seats": len(results), "drafted": len(drafted), "results": results}
    if dry_run:
        report.update(dry_run=True, would_offer=sum(1 for r in results if r.get("would_offer")))
    return report
