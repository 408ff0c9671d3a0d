"""The admin renders every registered table and never shows a token's raw value or lets a
read-only table be changed."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.urls import reverse
from django.utils import timezone

from core.models import Event
from crewlet.models import ApiToken
from learning.models import DiaryEntry
from tests.factories import token_for


@pytest.fixture
def rows(seat):
    entry = DiaryEntry(seat=seat, kind=DiaryEntry.LONG, content="retry the flaky test once", created_at=timezone.now())
    entry.set_vector([0.1, 0.2, 0.3], "m")
    entry.save()
    Event.objects.create(name="auxiliary_spend", seat=seat, payload={"tokens": 3})
    return entry


def _models():
    return [m for m in admin.site._registry if m._meta.app_label in ("crewlet", "learning")]


def test_every_registered_changelist_and_change_page_renders(admin_client, rows, seat_token):
    for model in _models():
        base = f"admin:{model._meta.app_label}_{model._meta.model_name}"
        listing = admin_client.get(reverse(f"{base}_changelist"), {"q": "a"})
        assert listing.status_code == 200, model
        obj = model.objects.first()
        if obj is not None:
            assert admin_client.get(reverse(f"{base}_change", args=[obj.pk])).status_code == 200, model


def test_every_learning_table_is_registered_read_only(admin_client, rows):
    from learning import models as learning_models

    for name in learning_models.__all__:
        model = getattr(learning_models, name)
        model_admin = admin.site._registry[model]
        assert not model_admin.has_add_permission(None) and not model_admin.has_change_permission(None), name
        assert not model_admin.has_delete_permission(None), name


def test_the_token_page_shows_the_hash_and_prefix_but_never_the_raw_token(admin_client, seat):
    raw = token_for(seat)
    token = ApiToken.objects.get(seat=seat)
    page = admin_client.get(reverse("admin:crewlet_apitoken_change", args=[token.pk])).content.decode()
    assert token.prefix in page and token.token_hash in page
    assert raw not in page
