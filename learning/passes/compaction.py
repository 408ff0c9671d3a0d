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
import re
from collections import Counter
from datetime import datetime, timedelta

from django.db import transaction

from core import aux, events
from core.event_types import CompactionRequested
from core.providers.errors import ProviderError
from core.purposes import AnswerUnparseable, Purpose, parse_json_object, register, system_user
from learning import limits, rewrites, skills
from learning.models import Episode
from learning.passes.clustering import Cluster, greedy_clusters

log = logging.getLogger("learning.passes.compaction")

TERMINAL_OUTCOMES = ("done", "failed")
COMPACTION_JACCARD_THRESHOLD = 0.6  # the spec names none for compaction; clustered synthesis's default
MIN_EXEMPLARS, MAX_EXEMPLARS = 2, 3
THREE_EXEMPLARS_FROM = 6  # a cluster this large keeps three exemplars, a smaller one two
CONDENSE_KIND = "the task or the outcome of one of an agent's past turns"


def candidates(seat, knobs, now: datetime) -> list[Episode]:
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
        return sum(skills.jaccard(e.tool_sequence, o.tool_sequence) for o in members if o is not e)

    ranked = sorted(members, key=lambda e: (e.review_outcome == "done", closeness(e), e.ended_at, e.id), reverse=True)
    return ranked[:k]


def turn_ref(episode: Episode) -> str:
    return episode.run_id or f"episode-{episode.pk}"


def task_of(episode: Episode) -> str:
    ask = episode.ask.strip()
    return f"{episode.task_summary.strip()} — {ask}" if ask else episode.task_summary.strip()


def member_inputs(seat, members: list[Episode]) -> tuple[list[dict], int]:
    """Each member as task, outcome, tools and date; long texts condensed first (labelled)."""
    texts = [t for e in members for t in (task_of(e), e.plan_summary.strip())]
    rewritten = rewrites.rewrite_all(
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


# ---- Purpose: compaction_summary ---------------------------------------------------------------


def _render(inputs: dict) -> list[dict]:
    lines = []
    for n, m in enumerate(inputs["members"], 1):
        lines.append(
            f"{n}. [{m['date']}, ended {m['ended'] or 'unknown'}] task: {m['task']}\n"
            f"   outcome: {m['outcome'] or '(no account)'}\n   tools: {', '.join(m['tools'])}"
        )
    return system_user(
        "You compact an AI agent's long-term memory. You are shown past turns of ONE agent that used "
        "overlapping tools. They will be replaced by a single summary the agent reads later as "
        "'you have done this kind of work N times', so say what they had in common, concretely. "
        "Texts marked (condensed) were shortened for you. Answer with one JSON object and nothing else: "
        '{"common_task_pattern": "one sentence: the kind of work these turns did", '
        '"common_outcome": "one sentence: how such turns usually ended and what they produced", '
        '"subjects_involved": ["people, systems, repositories, tickets or services named"], '
        '"notable_patterns": "one or two sentences: what varied between them, recurring pitfalls"}',
        f"{len(inputs['members'])} turns:\n\n" + "\n".join(lines),
    )


def _parse(text: str) -> dict:
    value = parse_json_object("compaction_summary", text)
    pattern = value.get("common_task_pattern")
    if not isinstance(pattern, str) or not pattern.strip():
        raise AnswerUnparseable("compaction_summary", "common_task_pattern is missing or empty", text)
    subjects = value.get("subjects_involved") or []
    if not isinstance(subjects, list):
        raise AnswerUnparseable("compaction_summary", "subjects_involved is not a list", text)
    return {
        "common_task_pattern": pattern.strip(),
        "common_outcome": str(value.get("common_outcome") or "").strip(),
        "subjects_involved": [str(s).strip() for s in subjects if str(s).strip()],
        "notable_patterns": str(value.get("notable_patterns") or "").strip(),
    }


_SUBJECT = re.compile(r"\b(?:[A-Z][A-Z0-9]+-\d+|[A-Z][a-zA-Z0-9_.-]{2,}|@[\w.-]+|#\d+)\b")
_WORD = re.compile(r"[a-zA-Z][a-zA-Z0-9_-]{2,}")
_STOP = {"the", "and", "for", "from", "with", "that", "this", "was", "were", "message", "asked"}


def _offline(inputs: dict) -> str:
    """Words most members' tasks share; the outcome tally; named subjects; tools that vary."""
    import json

    members = inputs["members"]
    half = max(1, len(members) // 2)
    per_task = [dict.fromkeys(w.lower() for w in _WORD.findall(m["task"]) if w.lower() not in _STOP) for m in members]
    counts = Counter(w for words in per_task for w in words)
    shared = [w for w in per_task[0] if counts[w] >= half][:8] if per_task else []
    tools = [set(m["tools"]) for m in members]
    always = sorted(set.intersection(*tools)) if tools else []
    varied = sorted(set.union(*tools) - set(always)) if tools else []
    done = sum(1 for m in members if m["ended"] == "done")
    subjects = Counter(s for m in members for s in dict.fromkeys(_SUBJECT.findall(m["task"] + " " + m["outcome"])))
    answer = {
        "common_task_pattern": f"Work about {' '.join(shared)}" if shared else f"Turns using {', '.join(always)}",
        "common_outcome": f"{done} of {len(members)} ended done; the usual tools were {', '.join(always) or 'mixed'}.",
        "subjects_involved": [s for s, n in subjects.most_common(8) if n >= 2] or [s for s, _ in subjects.most_common(3)],
        "notable_patterns": f"Tools that varied: {', '.join(varied)}." if varied else "The same tools every time.",
    }
    return json.dumps(answer)


COMPACTION_SUMMARY = register(
    Purpose(name="compaction_summary", render=_render, parse=_parse, offline=_offline, max_tokens=500, json=True)
)


# ---- the fold ------------------------------------------------------------------------------------


def fold(seat, cluster: Cluster) -> dict:
    """Summarise one cluster and write it; the originals stay raw when the summary cannot be had."""
    members = sorted(cluster.members, key=lambda e: (e.started_at, e.id))
    kept = exemplars(cluster)
    events.publish(CompactionRequested(cluster_size=len(members), exemplars=[turn_ref(e) for e in kept]), seat=seat)
    shown, condensed = member_inputs(seat, members)
    try:
        summary = aux.call(seat=seat, stage="background", purpose="compaction_summary", inputs={"members": shown}).value
    except (ProviderError, AnswerUnparseable) as exc:
        log.warning("compaction of %d turns for %s failed: %s", len(members), seat.handle, exc)
        return {"folded": False, "cluster_size": len(members), "why": f"{type(exc).__name__}: {exc}", "condensed": condensed}
    compacted = write_fold(seat, members, kept, summary)
    return {"folded": True, "compacted_id": compacted.id, "cluster_size": len(members), "condensed": condensed,
            "deleted": len(members) - len(kept), "exemplars": len(kept)}


def write_fold(seat, members: list[Episode], kept: list[Episode], summary: dict) -> Episode:
    outcomes = Counter(e.review_outcome for e in members)
    done = outcomes.get("done", 0)
    with transaction.atomic():
        compacted = Episode.objects.create(
            seat=seat,
            kind=Episode.COMPACTED,
            count=len(members),
            task_summary=summary["common_task_pattern"],
            plan_summary=summary["common_outcome"],
            tool_sequence=list(kept[0].tool_sequence),
            review_outcome=outcomes.most_common(1)[0][0],
            started_at=min(e.started_at for e in members),
            ended_at=max(e.ended_at for e in members),
            common_task_pattern=summary["common_task_pattern"],
            common_outcome=summary["common_outcome"],
            success_rate=done / len(members),
            subjects_involved=summary["subjects_involved"],
            notable_patterns=summary["notable_patterns"],
            exemplar_turn_ids=[turn_ref(e) for e in kept],
        )
        kept_ids = [e.id for e in kept]
        Episode.objects.filter(id__in=kept_ids).update(is_exemplar=True)
        Episode.objects.filter(id__in=[e.id for e in members if e.id not in kept_ids]).delete()
    return compacted


def compact_seat(seat, knobs, now: datetime, *, dry_run: bool = False) -> dict:
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
