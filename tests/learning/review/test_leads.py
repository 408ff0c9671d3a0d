"""The leads group and ``manage.py create_lead``."""

import pytest
from django.contrib.auth import authenticate, get_user_model
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.urls import reverse

from learning.review import leads

pytestmark = pytest.mark.django_db


def test_create_lead_makes_a_staff_user_who_can_publish_and_curate(capsys):
    call_command("create_lead", "lena", "--password", "quiet-harbour-42")

    user = authenticate(username="lena", password="quiet-harbour-42")
    assert user is not None and user.is_staff and not user.is_superuser
    assert user.groups.filter(name=leads.LEADS_GROUP).exists()
    assert user.has_perm("knowledge.publish_page") and user.has_perm("learning.change_synthesizedskill")
    assert user.has_perm("learning.view_diaryentry") and user.has_perm("learning.view_learninghealth")
    assert user.has_perm("learning.change_diaryentry") and user.has_perm("learning.delete_diaryentry")  # correct, forget
    assert not user.has_perm("learning.add_diaryentry") and not user.has_perm("learning.change_episode")
    assert user.has_perm("crewlet.view_configrevision") and user.has_perm("crewlet.add_configrevision")  # the editor
    assert not user.has_perm("crewlet.change_configrevision") and not user.has_perm("crewlet.delete_configrevision")
    assert "lena is a lead" in capsys.readouterr().out


def test_create_lead_is_idempotent_and_repairs_the_group():
    call_command("create_lead", "lena", "--password", "quiet-harbour-42")
    Group.objects.get(name=leads.LEADS_GROUP).permissions.clear()

    call_command("create_lead", "lena")  # no password: keeps the current one

    assert authenticate(username="lena", password="quiet-harbour-42") is not None
    assert Group.objects.count() == 1
    assert get_user_model().objects.get(username="lena").has_perm("knowledge.publish_page")


@pytest.mark.parametrize("password, reason", [("x", "too short"), ("password123", "too common"),
                                              ("83920174615", "entirely numeric")])
def test_create_lead_refuses_a_weak_password_and_creates_no_one(password, reason):
    with pytest.raises(CommandError, match=reason):
        call_command("create_lead", "lena", "--password", password)
    assert not get_user_model().objects.filter(username="lena").exists()


def test_the_admin_refuses_a_weak_password_when_a_user_is_added(client, db):
    admin = get_user_model().objects.create_superuser("root", password="quiet-harbour-42")
    client.force_login(admin)
    answer = client.post(reverse("admin:auth_user_add"), {"username": "newlead", "password1": "x", "password2": "x",
                                                          "usable_password": "true"})
    assert answer.status_code == 200 and b"too short" in answer.content
    assert not get_user_model().objects.filter(username="newlead").exists()


def test_staff_outside_the_leads_group_cannot_publish(staff_user):
    leads.ensure_leads_group()

    assert staff_user.is_staff and not staff_user.has_perm("knowledge.publish_page")


