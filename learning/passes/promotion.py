"""Cross-agent promotion: a procedure several seats of one unit arrived at becomes a draft page.

Daily, per unit, over the active skills of the unit's DIRECT members only (a parent never pools
its children: it would re-draft what the child already promoted, naming a team that never
converged), skills are greedy-clustered by tool-set Jaccard (the pooling threshold,
``learning.promotion.cluster_jaccard_threshold``). A cluster spanning at least ``min_sibling_count``
DISTINCT seats (one seat with four near-identical skills is a catalogue to curate, not a team
convergence) is distilled by the auxiliary model into a draft under the unit's knowledge container,
written through the PromotionWriter. The title is fixed when a cluster is first drafted and kept in
its ``PromotionDraft`` record (``promotion_record``), so the writer's title dedup makes a later tick
that finds the draft stay quiet, whichever skill is now the cluster's oldest; a draft a lead
rejected is drafted again only when the cluster still converges and includes a skill the pass had
not seen in it before the rejection. A write failure announces nothing; ``skill_promoted`` is telemetry (best effort).
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from django.db import DatabaseError
from django.utils import timezone

from core import auxiliary, events
from core.providers.errors import ProviderError
from core.purposes import AnswerUnparseable
from crewlet import config
from knowledge.models import AUTO_DRAFT_PREFIX
from knowledge.pages import MAX_PAGE_TITLE_CHARS
from knowledge.promotion_writer import Draft, WriteFailed, get_promotion_writer
from learning.events import SkillPromoted
from learning.passes import cursor, promotion_record
from learning.procedures import jaccard, procedure
from learning.purposes import skill_promotion_draft
from learning.purposes.skill_promotion_draft import NAME as PURPOSE

log = logging.getLogger("learning.passes.promotion")

MAX_TITLE_TOOLS = 4  # tools named in a draft's title; more are counted and the set is hashed
MAX_SKILLS_IN_PROMPT = 8  # one skill per distinct seat first: convergence is across seats


# ---- clustering ---------------------------------------------------------------------------------
def tool_names(skill) -> list[str]:
    """The skill's work tools in order (a step may be a name or a {"name": ...} object; a memory tool is no step:
    ``learning.procedures``)."""
    names = []
    for step in skill.tool_sequence or []:
        name = (step.get("name") or step.get("tool")) if isinstance(step, dict) else step
        if name:
            names.append(str(name))
    return procedure(names)


def tool_set(skill) -> frozenset[str]:
    return frozenset(tool_names(skill))


@dataclass
class Cluster:
    seed_tools: frozenset[str]
    members: list = field(default_factory=list)  # SynthesizedSkill rows, oldest first

    @property
    def seat_ids(self) -> list[int]:
        return list(dict.fromkeys(s.seat_id for s in self.members))


def cluster_skills(skills: list, threshold: float) -> list[Cluster]:
    """Greedy: each skill joins the first cluster whose seed (its oldest skill) it is similar to."""
    clusters: list[Cluster] = []
    for skill in skills:
        tools = tool_set(skill)
        if not tools:
            continue
        home = next((c for c in clusters if jaccard(c.seed_tools, tools) >= threshold), None)
        if home is None:
            home = Cluster(seed_tools=tools)
            clusters.append(home)
        home.members.append(skill)
    return clusters


def converged(clusters: list[Cluster], min_sibling_count: int) -> list[Cluster]:
    """Clusters spanning enough distinct seats; skill rows are never what is counted."""
    return [c for c in clusters if len(c.seat_ids) >= min_sibling_count]


def cluster_title(unit, tools: frozenset[str]) -> str:
    """Deterministic for a cluster (its seed's tool set), so dedup across ticks holds."""
    ordered = sorted(tools)
    room = MAX_PAGE_TITLE_CHARS - len(AUTO_DRAFT_PREFIX) - 1
    for shown in range(min(MAX_TITLE_TOOLS, len(ordered)), 0, -1):
        named = ", ".join(ordered[:shown])
        if shown < len(ordered):
            digest = hashlib.sha256("\n".join(ordered).encode()).hexdigest()[:8]
            named = f"{named} +{len(ordered) - shown} more [{digest}]"
        title = f"{unit.name or unit.key} procedure: {named}"
        if len(title) <= room:
            return title
    digest = hashlib.sha256("\n".join(ordered).encode()).hexdigest()[:12]
    return f"{unit.key} procedure [{digest}]"


# ---- the pass ---------------------------------------------------------------------------------------
def prompt_skills(cluster: Cluster) -> list:
    firsts: dict = {}
    for skill in cluster.members:
        firsts.setdefault(skill.seat_id, skill)
    rest = [s for s in cluster.members if firsts.get(s.seat_id) is not s]
    return (list(firsts.values()) + rest)[:MAX_SKILLS_IN_PROMPT]


def provenance(unit, cluster: Cluster, now) -> dict:
    return {
        "unit": unit.key,
        "container_key": unit.knowledge_container,
        "tool_set": sorted(cluster.seed_tools),
        "skills": [{"id": s.pk, "name": s.name, "seat": s.seat.handle, "turn": s.origin_turn_id} for s in cluster.members],
        "seats": list(dict.fromkeys(s.seat.handle for s in cluster.members)),
        "sibling_count": len(cluster.members),
        "distinct_agents": len(cluster.seat_ids),
        "drafted_at": now.isoformat(),
        "purpose": PURPOSE,
    }


def distil_inputs(unit, cluster: Cluster) -> skill_promotion_draft.Inputs:
    return skill_promotion_draft.Inputs(
        unit=unit.name or unit.key,
        tools=sorted(cluster.seed_tools),
        sibling_count=len(cluster.members),
        distinct_agents=len(cluster.seat_ids),
        skills=[
            {
                "seat": s.seat.handle,
                "name": s.name,
                "description": s.description,
                "body": s.body,
                "tool_sequence": tool_names(s),
            }
            for s in prompt_skills(cluster)
        ],
    )


def procedure_tools(steps, cluster: Cluster) -> tuple[str, ...]:
    """The tools the page names: every tool its steps call (in the steps' order), then the shared set.

    So the Tools line never lists fewer tools than the steps use (a draft must not contradict itself).
    """
    known = {t for s in cluster.members for t in (s.tool_sequence or [])} | set(cluster.seed_tools)
    text = "\n".join(steps)
    called = sorted((t for t in known if re.search(rf"(?<![\w-]){re.escape(t)}(?![\w-])", text)), key=text.find)
    return tuple(dict.fromkeys([*called, *sorted(cluster.seed_tools)]))


def distil(unit, cluster: Cluster, title: str, now) -> Draft:
    """One auxiliary call (charged to the cluster's first seat with a model) -> the draft page."""
    payer = next((s.seat for s in cluster.members if auxiliary.available(s.seat)), None)
    if payer is None:
        raise auxiliary.NoAuxiliaryModel(f"no seat of cluster {title!r} has an auxiliary model")
    answer: skill_promotion_draft.Answer = auxiliary.call(seat=payer, stage="background", purpose=PURPOSE,
                                                          inputs=distil_inputs(unit, cluster)).value
    summary = f"{answer.name}: {answer.summary}" if answer.name else answer.summary
    return Draft(
        title=title,
        summary=summary,
        when_to_use=answer.when_to_use,
        steps=tuple(answer.steps),
        tools=procedure_tools(answer.steps, cluster),
        source=provenance(unit, cluster, now),
    )


def announce(unit, outcome, cluster: Cluster) -> None:
    events.publish(
        SkillPromoted(
            unit=unit.key,
            container_key=outcome.container_key,
            page_id=str(outcome.page_id),
            page_title=outcome.page_title,
            sibling_count=len(cluster.members),
            distinct_agents=len(cluster.seat_ids),
            skills=[s.pk for s in cluster.members],
            seats=list(dict.fromkeys(s.seat.handle for s in cluster.members)),
        )
    )


def unit_clusters(unit, knobs) -> list[Cluster]:
    from learning.models import SynthesizedSkill

    skills = list(
        SynthesizedSkill.objects.filter(seat__unit=unit, seat__active=True, state=SynthesizedSkill.ACTIVE)
        .select_related("seat")
        .order_by("created_at", "id")
    )
    return converged(cluster_skills(skills, knobs.cluster_jaccard_threshold), knobs.min_sibling_count)


def promote_cluster(unit, cluster: Cluster, record, writer, report: dict, now) -> None:
    """Draft one converged cluster unless its draft is there, or was rejected with nothing new since."""
    title = record.title if record is not None else cluster_title(unit, cluster.seed_tools)
    container = unit.knowledge_container
    try:
        found = writer.existing(container_key=container, title=title)
        if found is not None:
            report["already_drafted"] += 1
            # the skills that joined while the draft waits were seen too: a rejection covers them
            promotion_record.remember(unit, title=title, page_id=found.page_id, members=cluster.members,
                                      drafted=False, record=record)
            return
        if record is not None and not promotion_record.unseen(record, cluster.members):
            report["held_after_rejection"] += 1  # a lead removed this draft; nothing new converged since
            return
        draft = distil(unit, cluster, title, now)
        outcome = writer.write_draft(container_key=container, draft=draft)
    except (WriteFailed, DatabaseError, ProviderError, AnswerUnparseable) as exc:
        log.warning("promotion: %s in %s not drafted (next tick retries): %s", title, container, exc)
        report["failed"].append({"unit": unit.key, "title": title, "error": str(exc)})
        return
    promotion_record.remember(unit, title=title, page_id=outcome.page_id, members=cluster.members,
                              drafted=not outcome.existed, record=record)
    if outcome.existed:
        report["already_drafted"] += 1
        return
    announce(unit, outcome, cluster)
    report["promoted"].append({"unit": unit.key, "page_id": outcome.page_id, "page_title": outcome.page_title})


def run_promotion(*, now=None) -> dict:
    """One daily tick over every unit; returns what it found, drafted, skipped and failed."""
    from crewlet.models import Unit

    now = now or timezone.now()
    knobs = config.knobs().learning
    report: dict[str, Any] = {"units": 0, "converged": 0, "promoted": [], "already_drafted": 0,
                              "held_after_rejection": 0, "skipped_units": [], "failed": []}
    if not (knobs.enabled and knobs.promotion.enabled):
        report["disabled"] = True
        return report
    writer = get_promotion_writer()
    # resumes after the unit a killed tick was on, and takes that unit last
    for unit in cursor.walk("promotion", Unit.objects.select_related("company").order_by("id")):
        if not unit.company.learning_enabled:
            continue
        report["units"] += 1
        clusters = unit_clusters(unit, knobs.promotion)
        report["converged"] += len(clusters)
        if not clusters:
            continue
        if not unit.knowledge_container or writer is None:
            why = (
                f"no knowledge container: set Unit.knowledge_container (units.{unit.key}.knowledge_container)"
                if writer
                else 'knowledge.backend is "none"'
            )
            log.info("promotion: unit %s skipped (%d converged clusters): %s", unit.key, len(clusters), why)
            report["skipped_units"].append({"unit": unit.key, "why": why})
            continue
        for cluster, record in zip(clusters, promotion_record.match(clusters, promotion_record.records_for(unit)),
                                   strict=True):
            promote_cluster(unit, cluster, record, writer, report, now)
    return report
