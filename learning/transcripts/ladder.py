"""The promotion ladder: vetoes first, then acceptance; and the two actions on a candidate.

Order is the mechanism. A shard that resembles an already-rejected shard (``rejected_similarity``)
or nearly duplicates a published one (``published_duplicate_similarity``) is rejected, and no
evidence outvotes a veto. Only then is it accepted: when it recurs across candidates from at least
``min_distinct_sources`` distinct sessions, or is corroborated (``corroboration_similarity``) by an
already-vetted shard. Repetition within one session counts once; the corroboration pool holds vetted
(published) shards only, so two candidates from one bad run never vouch for each other. A shard that
recurs from too few sources goes to review. Similarities are ranked in SQL (``core.vectors.nearest``).

``publish_memory`` submits a candidate to an independent judge (``kept: false`` is an ordinary
answer); ``reject_memory`` needs no judge.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from core import aux, events
from core.event_types import ShardDecided, ShardJudged, ShardRejected
from core.vectors import nearest
from crewlet import config
from crewlet.errors import Conflict
from learning.transcripts import purposes as tp
from learning.transcripts.models import Shard

VETTED = (Shard.PUBLISHED,)  # the corroboration pool: vetted shards only
RECURRENCE_POOL = (Shard.PENDING, Shard.REVIEW)  # unvetted candidates a new shard may recur with


@dataclass
class Outcome:
    status: str
    reason: str
    evidence: dict = field(default_factory=dict)
    absorb: list = field(default_factory=list)  # candidates folded into this shard


def knobs():
    return config.current().transcripts.ladder


def _company_shards(shard: Shard):
    return Shard.objects.filter(seat__company_id=shard.seat.company_id).exclude(pk=shard.pk)


def similar(shard: Shard, pool, threshold: float) -> list[tuple[Shard, float]]:
    """Shards of ``pool`` at or above ``threshold`` cosine similarity to ``shard``, nearest first (in SQL)."""
    if shard.embedding is None:
        return []
    ranked = nearest(pool, shard.embedding, shard.embedding_model).filter(distance__lte=1.0 - threshold)
    return [(row, round(1.0 - row.distance, 4)) for row in ranked]


def resembles_rejected(shard: Shard) -> Outcome | None:
    """Veto 1: it resembles a shard someone already rejected."""
    pool = _company_shards(shard).filter(status=Shard.REJECTED).exclude(rejected_by=Shard.BY_LADDER)
    hits = similar(shard, pool, knobs().rejected_similarity)
    if hits:
        other, sim = hits[0]
        return Outcome(Shard.REJECTED, f"resembles rejected shard #{other.pk} ({sim:.2f})", {"veto": "rejected", "similar_to": other.pk, "similarity": sim})
    return None


def duplicates_published(shard: Shard) -> Outcome | None:
    """Veto 2: it is a near-duplicate of a published shard."""
    hits = similar(shard, _company_shards(shard).filter(status=Shard.PUBLISHED), knobs().published_duplicate_similarity)
    if hits:
        other, sim = hits[0]
        return Outcome(Shard.REJECTED, f"near-duplicate of published shard #{other.pk} ({sim:.2f})", {"veto": "duplicate", "similar_to": other.pk, "similarity": sim})
    return None


def veto(shard: Shard) -> Outcome | None:
    return resembles_rejected(shard) or duplicates_published(shard)


def recurrence(shard: Shard) -> tuple[list[Shard], set[str], int]:
    """The unvetted candidates this shard recurs with, the distinct sources among all, and the occurrences."""
    group = [row for row, _sim in similar(shard, _company_shards(shard).filter(status__in=RECURRENCE_POOL), knobs().corroboration_similarity)]
    sources, occurrences = {shard.session_id}, 1
    for row in group:
        sources.update(row.evidence.get("sources") or [row.session_id])
        occurrences += int(row.evidence.get("occurrences") or 1)
    return group, sources, occurrences


def corroborated(shard: Shard) -> tuple[Shard, float] | None:
    hits = similar(shard, _company_shards(shard).filter(status__in=VETTED), knobs().corroboration_similarity)
    return hits[0] if hits else None


def decide(shard: Shard) -> Outcome:
    """The ladder for one shard, in the spec's order."""
    if shard.embedding is None:
        return Outcome(Shard.PENDING, "no vector yet: cannot be compared")
    vetoed = veto(shard)
    if vetoed:
        return vetoed
    group, sources, occurrences = recurrence(shard)
    evidence = {"distinct_sources": len(sources), "sources": sorted(sources), "occurrences": occurrences, "recurs_with": [s.pk for s in group]}
    if len(sources) >= knobs().min_distinct_sources:
        return Outcome(Shard.ACCEPTED, f"recurs across {len(sources)} distinct sources", evidence, group)
    support = corroborated(shard)
    if support:
        evidence.update(corroborated_by=support[0].pk, similarity=support[1])
        return Outcome(Shard.ACCEPTED, f"corroborated by vetted shard #{support[0].pk} ({support[1]:.2f})", evidence, group)
    if group:
        return Outcome(Shard.REVIEW, f"recurs {occurrences} times from {len(sources)} distinct source(s); too few", evidence, group)
    return Outcome(Shard.PENDING, "no recurrence or corroboration yet", evidence)


def evaluate(shard: Shard) -> Outcome:
    """Decide and record one shard's rung; candidates it recurred with are folded into it."""
    outcome = decide(shard)
    with transaction.atomic():
        _record(shard, outcome, by=Shard.BY_LADDER)
        for other in outcome.absorb:
            Shard.objects.filter(pk=other.pk, status__in=RECURRENCE_POOL).update(
                status=Shard.ABSORBED, absorbed_into=shard, reason=f"recurs with shard #{shard.pk}", decided_at=timezone.now()
            )
    return outcome


def _record(shard: Shard, outcome: Outcome, *, by: str) -> None:
    shard.status, shard.reason = outcome.status, outcome.reason[:300]
    shard.evidence = {**shard.evidence, **outcome.evidence}
    shard.decided_at = timezone.now()
    if outcome.status == Shard.REJECTED:
        shard.rejected_by = by
    shard.save(update_fields=["status", "reason", "evidence", "decided_at", "rejected_by"])
    events.publish(ShardDecided(shard_id=shard.pk, status=shard.status, reason=shard.reason), seat=shard.seat)


def publish_memory(*, shard: Shard, stage: str = "operator", submitted_by: str = "") -> dict:
    """Submit a candidate to the independent judge. Vetoes are checked first and never outvoted."""
    if shard.status == Shard.PUBLISHED:
        return _answer(shard, kept=True)
    if shard.status in (Shard.REJECTED, Shard.ABSORBED):
        target = f"; submit shard #{shard.absorbed_into_id} instead" if shard.absorbed_into_id else ""
        raise Conflict(f"shard {shard.pk} is {shard.status} and cannot be submitted{target}", shard_id=shard.pk, status=shard.status)
    vetoed = veto(shard)
    if vetoed:
        _record(shard, vetoed, by=Shard.BY_LADDER)
        return _answer(shard, kept=False)
    evidence = dict(shard.evidence)
    if submitted_by:
        evidence["submitted_by"] = submitted_by
    episode = shard.episode
    result = aux.call(
        seat=shard.seat, stage=stage, purpose=tp.JUDGE,
        inputs={"lesson": shard.text, "evidence": evidence, "episode": _episode_excerpt(episode)},
    )
    verdict = {**result.value, "provider": result.provider, "model": result.model, "at": timezone.now().isoformat()}
    with transaction.atomic():
        shard.judge_verdict = verdict
        shard.status = Shard.PUBLISHED if verdict["kept"] else Shard.NOT_KEPT
        shard.reason = (("kept: " if verdict["kept"] else "not kept: ") + verdict["reason"])[:300]
        shard.decided_at = timezone.now()
        shard.published_at = shard.decided_at if verdict["kept"] else None
        shard.save(update_fields=["judge_verdict", "status", "reason", "decided_at", "published_at"])
        events.publish(
            ShardJudged(shard_id=shard.pk, kept=verdict["kept"], reason=verdict["reason"], submitted_by=submitted_by),
            seat=shard.seat,
        )
    return _answer(shard, kept=verdict["kept"])


def _episode_excerpt(episode) -> dict:
    if episode is None:
        return {}
    return {"kind": episode.kind, "ask": episode.ask, "failure": episode.failure, "correction": episode.correction}


def _answer(shard: Shard, *, kept: bool) -> dict:
    return {"shard_id": shard.pk, "status": shard.status, "kept": kept, "reason": shard.reason}


def reject_memory(*, shard: Shard, by: str, actor: str = "") -> dict:
    """Reject a candidate; no judge. A published lesson is not a candidate and stays in the trusted pool."""
    if shard.status == Shard.PUBLISHED:
        raise Conflict(f"shard {shard.pk} is published; rejecting a candidate cannot remove a vetted lesson", shard_id=shard.pk)
    with transaction.atomic():
        shard.status, shard.rejected_by, shard.reason = Shard.REJECTED, by, f"rejected by {actor or by}"[:300]
        shard.decided_at = timezone.now()
        shard.save(update_fields=["status", "rejected_by", "reason", "decided_at"])
        events.publish(ShardRejected(shard_id=shard.pk, by=by, actor=actor), seat=shard.seat)
    return {"shard_id": shard.pk, "status": shard.status, "kept": False, "reason": shard.reason}
