"""The human boundary: approving a recommendation writes nothing; installing a new private file is
a separate, explicit, additive step that never overwrites.

``review_recommendation(approve=True)`` on an edit of a shared file returns the drafted contents
and diff for a person to apply and writes zero bytes. A recommendation that creates a new private
file (a skill, a hook script, a subagent) may then be installed with ``install``: the file is
created exclusively (``open(..., "x")``), so an existing file, even one that appeared since the
draft, is refused and left as it was.
"""

from __future__ import annotations

import os

from django.db import transaction
from django.utils import timezone

from core import events
from crewlet.errors import BadInput, Conflict
from learning.transcripts.events import RecommendationInstalled, RecommendationReviewed
from learning.transcripts.models import Recommendation


def _answer(rec: Recommendation, *, wrote_bytes: int) -> dict:
    return {
        "id": rec.pk,
        "status": rec.status,
        "tier": rec.tier,
        "mode": rec.mode,
        "target_path": rec.target_path,
        "wrote_bytes": wrote_bytes,
        "contents": rec.contents,
        "diff": rec.diff,
        "notes": rec.notes,
        "installable": rec.mode == Recommendation.CREATE and rec.status == Recommendation.APPROVED,
    }


def review_recommendation(*, recommendation: Recommendation, approve: bool, user=None, actor: str = "") -> dict:
    """Record a person's verdict. Nothing is written to the repository, whatever the verdict."""
    if recommendation.status == Recommendation.INSTALLED:
        raise Conflict(f"recommendation {recommendation.pk} is already installed", id=recommendation.pk)
    with transaction.atomic():
        recommendation.status = Recommendation.APPROVED if approve else Recommendation.REJECTED
        recommendation.reviewed_by = user if getattr(user, "pk", None) else None
        recommendation.reviewed_at = timezone.now()
        recommendation.save(update_fields=["status", "reviewed_by", "reviewed_at", "updated_at"])
        events.publish(
            RecommendationReviewed(
                recommendation_id=recommendation.pk, approve=approve, actor=actor or getattr(user, "username", ""),
                wrote_bytes=0,
            ),
            seat=recommendation.seat,
        )
    return _answer(recommendation, wrote_bytes=0)


def _target(rec: Recommendation) -> str:
    if not rec.repo_root:
        raise BadInput(f"recommendation {rec.pk} has no repository recorded (ingest with --repo) and cannot be installed")
    root = os.path.realpath(rec.repo_root)
    path = os.path.realpath(os.path.join(root, rec.target_path))
    if os.path.commonpath([root, path]) != root:
        raise BadInput(f"recommendation {rec.pk} targets {rec.target_path!r}, outside the repository")
    return path


def install(*, recommendation: Recommendation, user=None, actor: str = "") -> dict:
    """Create the approved new private file; refuse an edit, an unapproved draft, or an existing file."""
    rec = recommendation
    if rec.mode != Recommendation.CREATE:
        raise Conflict(f"recommendation {rec.pk} edits a shared file ({rec.target_path}); a person applies it", id=rec.pk)
    if rec.status != Recommendation.APPROVED:
        raise Conflict(f"recommendation {rec.pk} is {rec.status}; only an approved recommendation is installed", id=rec.pk)
    path = _target(rec)
    data = rec.contents.encode("utf-8")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        with open(path, "xb") as fh:
            fh.write(data)
    except FileExistsError:
        raise Conflict(f"{rec.target_path} already exists in the repository; installing never overwrites", id=rec.pk) from None
    if rec.target_path.endswith(".sh"):
        os.chmod(path, 0o755)
    with transaction.atomic():
        rec.status, rec.installed_at = Recommendation.INSTALLED, timezone.now()
        rec.landed_at = rec.landed_at or rec.installed_at
        rec.save(update_fields=["status", "installed_at", "landed_at", "updated_at"])
        events.publish(
            RecommendationInstalled(
                recommendation_id=rec.pk, path=rec.target_path, wrote_bytes=len(data),
                actor=actor or getattr(user, "username", ""),
            ),
            seat=rec.seat,
        )
    return _answer(rec, wrote_bytes=len(data))
