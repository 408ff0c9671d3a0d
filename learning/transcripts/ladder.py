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

import numpy as np
from django.db import transaction
from django.utils import timezone

from core import auxiliary, events
from core.vectors import nearest
from crewlet import config
from crewlet.errors import Conflict
from learning.purposes import transcript_judge
from learning.transcripts.events import ShardDecided, ShardJudged, ShardRejected
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


class Pool:
    """The company's comparable shards, read in ONE query and ranked in memory while a run's new shards climb.

    Holds every shard a rung can compare with (candidates, shards in review, vetted ones, and those
    a person or seat rejected) of one embedding model and width; ``note`` keeps it current as the
    run decides, so a later shard meets what an earlier one became. Without a pool, each rung
    ranks in SQL (``core.vectors.nearest``): the same rules, one shard at a time.
    """

    KEPT = (Shard.PENDING, Shard.REVIEW, Shard.PUBLISHED, Shard.REJECTED)

    def __init__(self, company_id: int, model: str, dim: int):
        self.model, self.dim = model, dim
        rows = list(
            Shard.objects.filter(seat__company_id=company_id, status__in=self.KEPT, embedding__isnull=False,
                                 embedding_model=model, embedding_dim=dim)
            .exclude(status=Shard.REJECTED, rejected_by=Shard.BY_LADDER)
            .only("pk", "status", "session_id", "evidence", "rejected_by", "embedding")
        )
        self.rows: dict[int, Shard] = {}
        self.ids: list[int] = []
        self.matrix = np.zeros((0, dim), dtype=np.float32)
        self._add([r for r in rows])

    def _add(self, shards: list[Shard]) -> None:
        fresh = [s for s in shards if s.pk not in self.rows]
        if not fresh:
            return
        vectors = np.asarray([list(s.embedding or ()) for s in fresh], dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        self.matrix = np.vstack([self.matrix, vectors / np.where(norms == 0, 1, norms)])
        for s in fresh:
            self.rows[s.pk] = s
            self.ids.append(s.pk)

    def adopt(self, shards: list[Shard]) -> None:
        """Use these instances for their rows (a run's own shards), so what the ladder changes on them is seen."""
        for shard in shards:
            if self.comparable(shard) and shard.pk in self.rows:
                self.rows[shard.pk] = shard

    def comparable(self, shard: Shard) -> bool:
        return shard.embedding is not None and shard.embedding_model == self.model and shard.embedding_dim == self.dim

    def note(self, shard: Shard) -> None:
        """Record what ``shard`` became: in the pool while comparable, out of it otherwise."""
        if self.comparable(shard) and shard.status in self.KEPT and not (
            shard.status == Shard.REJECTED and shard.rejected_by == Shard.BY_LADDER
        ):
            self._add([shard])
            self.rows[shard.pk] = shard

    def similar(self, shard: Shard, statuses, threshold: float, *, rejected_by_ladder: bool = True) -> list[tuple[Shard, float]]:
        if not self.comparable(shard) or not self.ids:
            return []
        vector = np.asarray(list(shard.embedding or ()), dtype=np.float32)
        norm = np.linalg.norm(vector)
        sims = self.matrix @ (vector / (norm or 1.0))
        order = np.argsort(-sims, kind="stable")
        out = []
        for i in order:
            sim = float(sims[i])
            if sim < threshold - 1e-6:
                break
            row = self.rows[self.ids[i]]
            if row.pk == shard.pk or row.status not in statuses:
                continue
            if not rejected_by_ladder and row.rejected_by == Shard.BY_LADDER:
                continue
            out.append((row, round(sim, 4)))
        return out


def similar(shard: Shard, pool, threshold: float) -> list[tuple[Shard, float]]:
    """Shards of ``pool`` at or above ``threshold`` cosine similarity to ``shard``, nearest first (in SQL)."""
    if shard.embedding is None:
        return []
    ranked = nearest(pool, shard.embedding, shard.embedding_model).filter(distance__lte=1.0 - threshold)
    return [(row, round(1.0 - row.distance, 4)) for row in ranked]


def _find(shard: Shard, statuses, threshold: float, pool: Pool | None, *, rejected_by_ladder: bool = True):
    """The shards of these statuses at or above ``threshold``: from the in-memory pool, else ranked in SQL."""
    if pool is not None:
        return pool.similar(shard, statuses, threshold, rejected_by_ladder=rejected_by_ladder)
    qs = _company_shards(shard).filter(status__in=statuses)
    if not rejected_by_ladder:
        qs = qs.exclude(rejected_by=Shard.BY_LADDER)
    return similar(shard, qs, threshold)


def resembles_rejected(shard: Shard, pool: Pool | None = None) -> Outcome | None:
    """Veto 1: it resembles a shard someone already rejected."""
    hits = _find(shard, (Shard.REJECTED,), knobs().rejected_similarity, pool, rejected_by_ladder=False)
    if hits:
        other, sim = hits[0]
        return Outcome(Shard.REJECTED, f"resembles rejected shard #{other.pk} ({sim:.2f})", {"veto": "rejected", "similar_to": other.pk, "similarity": sim})
    return None


def duplicates_published(shard: Shard, pool: Pool | None = None) -> Outcome | None:
    """Veto 2: it is a near-duplicate of a published shard."""
    hits = _find(shard, (Shard.PUBLISHED,), knobs().published_duplicate_similarity, pool)
    if hits:
        other, sim = hits[0]
        return Outcome(Shard.REJECTED, f"near-duplicate of published shard #{other.pk} ({sim:.2f})", {"veto": "duplicate", "similar_to": other.pk, "similarity": sim})
    return None


def veto(shard: Shard, pool: Pool | None = None) -> Outcome | None:
    return resembles_rejected(shard, pool) or duplicates_published(shard, pool)


def recurrence(shard: Shard, pool: Pool | None = None) -> tuple[list[Shard], set[str], int]:
    """The unvetted candidates this shard recurs with, the distinct sources among all, and the occurrences."""
    group = [row for row, _sim in _find(shard, RECURRENCE_POOL, knobs().corroboration_similarity, pool)]
    sources, occurrences = {shard.session_id}, 1
    for row in group:
        sources.update(row.evidence.get("sources") or [row.session_id])
        occurrences += int(row.evidence.get("occurrences") or 1)
    return group, sources, occurrences


def corroborated(shard: Shard, pool: Pool | None = None) -> tuple[Shard, float] | None:
    hits = _find(shard, VETTED, knobs().corroboration_similarity, pool)
    return hits[0] if hits else None


def decide(shard: Shard, pool: Pool | None = None) -> Outcome:
    """The ladder for one shard, in the spec's order."""
    if shard.embedding is None:
        return Outcome(Shard.PENDING, "no vector yet: cannot be compared")
    vetoed = veto(shard, pool)
    if vetoed:
        return vetoed
    group, sources, occurrences = recurrence(shard, pool)
    evidence = {"distinct_sources": len(sources), "sources": sorted(sources), "occurrences": occurrences, "recurs_with": [s.pk for s in group]}
    if len(sources) >= knobs().min_distinct_sources:
        return Outcome(Shard.ACCEPTED, f"recurs across {len(sources)} distinct sources", evidence, group)
    support = corroborated(shard, pool)
    if support:
        evidence.update(corroborated_by=support[0].pk, similarity=support[1])
        return Outcome(Shard.ACCEPTED, f"corroborated by vetted shard #{support[0].pk} ({support[1]:.2f})", evidence, group)
    if group:
        return Outcome(Shard.REVIEW, f"recurs {occurrences} times from {len(sources)} distinct source(s); too few", evidence, group)
    return Outcome(Shard.PENDING, "no recurrence or corroboration yet", evidence)


def evaluate(shard: Shard, pool: Pool | None = None, *, sink: list | None = None) -> Outcome:
    """Decide and record one shard's rung; candidates it recurred with are folded into it.

    ``sink`` (a climb's list) collects the decision events for one bulk write instead of one each.
    """
    outcome = decide(shard, pool)
    with transaction.atomic():
        _record(shard, outcome, by=Shard.BY_LADDER, sink=sink)
        absorbed = [other.pk for other in outcome.absorb]
        if absorbed:
            Shard.objects.filter(pk__in=absorbed, status__in=RECURRENCE_POOL).update(
                status=Shard.ABSORBED, absorbed_into=shard, reason=f"recurs with shard #{shard.pk}", decided_at=timezone.now()
            )
    for other in outcome.absorb:
        other.status, other.absorbed_into_id = Shard.ABSORBED, shard.pk
    if pool is not None:
        for other in outcome.absorb:
            pool.note(other)
        pool.note(shard)
    return outcome


def _record(shard: Shard, outcome: Outcome, *, by: str, sink: list | None = None) -> None:
    shard.status, shard.reason = outcome.status, outcome.reason[:300]
    shard.evidence = {**shard.evidence, **outcome.evidence}
    shard.decided_at = timezone.now()
    if outcome.status == Shard.REJECTED:
        shard.rejected_by = by
    shard.save(update_fields=["status", "reason", "evidence", "decided_at", "rejected_by"])
    decided = ShardDecided(shard_id=shard.pk, status=shard.status, reason=shard.reason)
    if sink is not None:
        sink.append((decided, shard.seat, ""))
    else:
        events.publish(decided, seat=shard.seat)


def publish_memory(*, shard: Shard, stage: str = "operator", submitted_by: str = "", pool: Pool | None = None) -> dict:
    """Submit a candidate to the independent judge. Vetoes are checked first and never outvoted."""
    if shard.status == Shard.PUBLISHED:
        return _answer(shard, kept=True)
    if shard.status in (Shard.REJECTED, Shard.ABSORBED):
        target = f"; submit shard #{shard.absorbed_into_id} instead" if shard.absorbed_into_id else ""
        raise Conflict(f"shard {shard.pk} is {shard.status} and cannot be submitted{target}", shard_id=shard.pk, status=shard.status)
    vetoed = veto(shard, pool)
    if vetoed:
        _record(shard, vetoed, by=Shard.BY_LADDER)
        return _answer(shard, kept=False)
    evidence = dict(shard.evidence)
    if submitted_by:
        evidence["submitted_by"] = submitted_by
    episode = shard.episode
    result = auxiliary.call(
        seat=shard.seat, stage=stage, purpose=transcript_judge.NAME,
        inputs=transcript_judge.Inputs(lesson=shard.text, evidence=evidence, episode=_episode_excerpt(episode)),
    )
    judged: transcript_judge.Answer = result.value
    verdict = {**judged.model_dump(mode="json"), "provider": result.provider, "model": result.model,
               "at": timezone.now().isoformat()}
    with transaction.atomic():
        shard.judge_verdict = verdict
        shard.status = Shard.PUBLISHED if judged.kept else Shard.NOT_KEPT
        shard.reason = (("kept: " if judged.kept else "not kept: ") + judged.reason)[:300]
        shard.decided_at = timezone.now()
        shard.published_at = shard.decided_at if judged.kept else None
        shard.save(update_fields=["judge_verdict", "status", "reason", "decided_at", "published_at"])
        events.publish(
            ShardJudged(shard_id=shard.pk, kept=judged.kept, reason=judged.reason, submitted_by=submitted_by),
            seat=shard.seat,
        )
    if pool is not None:
        pool.note(shard)
    return _answer(shard, kept=judged.kept)


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
