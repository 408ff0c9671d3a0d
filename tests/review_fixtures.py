"""Fixtures for the leads' review: a lead, a staff user who is not one, skills with history, drafts.

Registered as a plugin in ``tests/conftest.py``; the helpers are imported where used.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.utils import timezone

from knowledge.models import AUTO_DRAFT_PREFIX, AUTO_DRAFTED_PARENT, Page
from learning.memory import skills
from learning.review import leads

LEAD_PASSWORD = "lead-pass-123"
STAFF_PASSWORD = "staff-pass-123"

BODY_V1 = "# Deploy a hotfix\n\n1. Open the release branch\n2. Cherry-pick the fix\n3. Run the smoke tests\n"
BODY_V2 = BODY_V1 + "4. Announce in #releases\n"
BODY_V3 = "# Deploy a hotfix\n\n1. Open the release branch\n2. Cherry-pick the fix\n\n## What practice added\n- Observed in practice: skip smoke tests\n"


@pytest.fixture
def lead(db):
    return leads.create_lead(username="lena", password=LEAD_PASSWORD)


@pytest.fixture
def staff_user(db):
    """Staff who can read the queue and the skills but is not in the leads group."""
    user = get_user_model().objects.create_user("sam", password=STAFF_PASSWORD, is_staff=True)
    codenames = ["view_page", "view_draftpage", "change_page", "view_synthesizedskill", "view_diaryentry"]
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    return user


def make_skill(seat, name="deploy-hotfix", bodies=(BODY_V1, BODY_V2, BODY_V3), **fields):
    """A skill revised through the service: ``bodies[0]`` is v1, the last one is live."""
    skill = skills.create(
        seat=seat, name=name, description=f"How {seat.handle} does {name}", body=bodies[0],
        tool_sequence=["git", "ci", "chat"], trigger="clustered",
    )
    for i, body in enumerate(bodies[1:], start=2):
        skill = skills.revise(skill=skill, body=body, reason=f"refined to v{i}", actor="refiner")
    if fields:
        type(skill).objects.filter(pk=skill.pk).update(**fields)
        skill.refresh_from_db()
    return skill


def drafts_parent(container="ENG") -> Page:
    parent, _ = Page.objects.get_or_create(
        container_key=container, title=AUTO_DRAFTED_PARENT, defaults={"state": Page.PUBLISHED, "author": "crewlet"}
    )
    return parent


def make_draft(container="ENG", title="Deploy a hotfix", body=BODY_V1, seats=("ana", "bo", "cy"), skills_=None, **source):
    return Page.objects.create(
        container_key=container,
        title=f"{AUTO_DRAFT_PREFIX} {title}",
        body=body,
        parent=drafts_parent(container),
        state=Page.DRAFT,
        author="crewlet-promotion",
        source={"skills": list(skills_ or [f"{s}:deploy-hotfix" for s in seats]), "seats": list(seats), **source},
    )


def age(model, pk, *, days: float, field: str = "created_at"):
    model.objects.filter(pk=pk).update(**{field: timezone.now() - timedelta(days=days)})
