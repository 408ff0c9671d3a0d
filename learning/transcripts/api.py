"""``publish_memory``, ``reject_memory`` and ``review_recommendation`` over HTTP.

A seat token acts on its own shards only; an operator token acts on any shard or recommendation
of its company. Reviewing recommendations is a lead's act: operator tokens only.
"""

from __future__ import annotations

from ninja import Path, Router, Schema

from crewlet.api_input import InputSchema
from crewlet.auth import operator_auth, seat_auth
from crewlet.errors import NotFound, error_responses
from crewlet.models import ApiToken
from learning.limits import MAX_ROW_ID
from learning.transcripts import ladder
from learning.transcripts.artifacts import install, review_recommendation
from learning.transcripts.models import Recommendation, Shard

router = Router(tags=["transcripts"])

ROW_ID = Path(..., ge=1, le=MAX_ROW_ID)


class ShardVerdictOut(Schema):
    shard_id: int
    status: str
    kept: bool
    reason: str


class ReviewIn(InputSchema):
    approve: bool


class RecommendationOut(Schema):
    id: int
    status: str
    tier: str
    mode: str
    target_path: str
    wrote_bytes: int
    contents: str
    diff: str
    notes: str
    installable: bool


def _shard_for(request, shard_id: int) -> tuple[Shard, str, str]:
    token: ApiToken = request.auth
    qs = Shard.objects.select_related("seat", "seat__role", "seat__company", "episode")
    own = token.own_seat
    if own is not None:
        shard = qs.filter(pk=shard_id, seat=own).first()
        by, actor = Shard.BY_SEAT, own.handle
    else:
        shard = qs.filter(pk=shard_id, seat__company=token.company).first()
        by, actor = Shard.BY_PERSON, f"operator:{token.prefix}"
    if shard is None:
        raise NotFound(f"no shard {shard_id} for this token")
    return shard, by, actor


@router.post("/transcripts/shards/{shard_id}/publish", response={200: ShardVerdictOut, **error_responses(401, 404, 409, 422)},
             auth=seat_auth)
def publish_memory(request, shard_id: int = ROW_ID):
    """Submit a candidate to the independent judge; ``kept: false`` is an ordinary answer."""
    shard, _by, actor = _shard_for(request, shard_id)
    return ladder.publish_memory(shard=shard, stage="operator", submitted_by=actor)


@router.post("/transcripts/shards/{shard_id}/reject", response={200: ShardVerdictOut, **error_responses(401, 404, 409, 422)},
             auth=seat_auth)
def reject_memory(request, shard_id: int = ROW_ID):
    """Reject a candidate; no judge is asked."""
    shard, by, actor = _shard_for(request, shard_id)
    return ladder.reject_memory(shard=shard, by=by, actor=actor)


def _recommendation(request, recommendation_id: int) -> Recommendation:
    rec = Recommendation.objects.select_related("seat").filter(pk=recommendation_id, seat__company=request.auth.company).first()
    if rec is None:
        raise NotFound(f"no recommendation {recommendation_id}")
    return rec


@router.post("/transcripts/recommendations/{recommendation_id}/review", response={200: RecommendationOut, **error_responses(400, 401, 404, 409, 413, 422)}, auth=operator_auth)
def review(request, payload: ReviewIn, recommendation_id: int = ROW_ID):
    """Approve or reject; approval writes zero bytes and returns the contents to apply."""
    rec = _recommendation(request, recommendation_id)
    return review_recommendation(recommendation=rec, approve=payload.approve, actor=f"operator:{request.auth.prefix}")


@router.post("/transcripts/recommendations/{recommendation_id}/install", response={200: RecommendationOut, **error_responses(401, 404, 409, 422)}, auth=operator_auth)
def install_recommendation(request, recommendation_id: int = ROW_ID):
    """Create an approved new private file; never overwrites (409 if the file exists)."""
    rec = _recommendation(request, recommendation_id)
    return install(recommendation=rec, actor=f"operator:{request.auth.prefix}")
