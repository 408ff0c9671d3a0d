"""The learning admin: skills curated in place and recorded, everything else read-only and filterable."""

import pytest
from django.apps import apps
from django.contrib import admin
from django.urls import reverse

from core.models import Event
from learning.memory import diary
from learning.models import DiaryEntry, SynthesizedSkill
from tests.review_fixtures import BODY_V1, BODY_V2, BODY_V3, make_skill

pytestmark = pytest.mark.django_db


def curate_url(skill, op):
    return reverse("admin:learning_synthesizedskill_curate", args=[skill.pk, op])


def test_every_learning_model_is_registered_in_the_admin():
    models = apps.get_app_config("learning").get_models()
    assert [m.__name__ for m in models if not admin.site.is_registered(m)] == []


def test_rolling_back_through_the_admin_is_a_forward_step(client, lead, seat):
    skill = make_skill(seat)  # v1 BODY_V1, v2 BODY_V2, live v3 BODY_V3
    client.force_login(lead)

    client.post(curate_url(skill, "rollback"), {"to_version": "1"})

    skill.refresh_from_db()
    assert skill.version == 4 and skill.body == BODY_V1
    kept = {v.version: v.body for v in skill.versions.all()}
    assert kept == {1: BODY_V1, 2: BODY_V2, 3: BODY_V3}  # nothing lost
    assert skill.versions.get(version=3).reason == "rollback to v1"

    client.post(curate_url(skill, "rollback"), {"to_version": "3"})  # un-rewind
    skill.refresh_from_db()
    assert skill.version == 5 and skill.body == BODY_V3


def test_a_rollback_is_recorded_with_the_acting_user(client, lead, seat):
    skill = make_skill(seat)
    client.force_login(lead)

    client.post(curate_url(skill, "rollback"), {"to_version": "2"})

    event = Event.objects.get(name="admin_action")
    assert event.seat == seat
    assert event.payload["user"] == "lena" and event.payload["action"] == "rollback"
    assert event.payload["object"] == f"learning.synthesizedskill:{skill.pk}"
    assert event.payload["detail"]["from_version"] == 3 and event.payload["detail"]["to_version"] == 2
    assert skill.versions.get(version=3).actor == "lena"


def test_an_htmx_curation_answers_the_skill_panel_in_place(client, lead, seat):
    skill = make_skill(seat)
    client.force_login(lead)

    response = client.post(curate_url(skill, "rollback"), {"to_version": "1"}, HTTP_HX_REQUEST="true")

    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<section id="skill-panel"')
    assert 'id="skill-version">4<' in html and "Rolled back as a forward step: now v4." in html


def test_a_rollback_to_a_version_not_kept_is_refused_in_the_panel(client, lead, seat):
    skill = make_skill(seat)
    client.force_login(lead)

    response = client.post(curate_url(skill, "rollback"), {"to_version": "9"}, HTTP_HX_REQUEST="true")

    assert "has no archived version 9" in response.content.decode()
    skill.refresh_from_db()
    assert skill.version == 3
    assert not Event.objects.filter(name="admin_action").exists()


@pytest.mark.parametrize(
    "op, field, expected",
    [("pin", "pinned", True), ("unpin", "pinned", False), ("archive", "state", "archived"), ("restore", "state", "active")],
)
def test_each_curation_changes_the_skill_and_records_the_user(client, lead, seat, op, field, expected):
    initial = {"pinned": op == "unpin", "state": "archived" if op == "restore" else "active"}
    skill = make_skill(seat, **initial)
    client.force_login(lead)

    response = client.post(curate_url(skill, op))

    assert response.status_code == 302
    skill.refresh_from_db()
    assert getattr(skill, field) == expected
    event = Event.objects.get(name="admin_action")
    assert (event.payload["user"], event.payload["action"]) == ("lena", op)


def test_bulk_curation_actions_are_recorded_per_skill(client, lead, seat, other_seat):
    a, b = make_skill(seat), make_skill(other_seat)
    client.force_login(lead)

    client.post(
        reverse("admin:learning_synthesizedskill_changelist"), {"action": "pin_selected", "_selected_action": [a.pk, b.pk]}
    )

    assert SynthesizedSkill.objects.filter(pinned=True).count() == 2
    events = Event.objects.filter(name="admin_action", payload__action="pin")
    assert sorted(e.payload["detail"]["skill_id"] for e in events) == sorted([a.pk, b.pk])
    assert {e.payload["user"] for e in events} == {"lena"}


def test_a_staff_user_who_is_not_a_lead_cannot_curate(client, staff_user, seat):
    skill = make_skill(seat)
    client.force_login(staff_user)

    assert client.post(curate_url(skill, "rollback"), {"to_version": "1"}).status_code == 403
    assert client.post(curate_url(skill, "archive")).status_code == 403

    skill.refresh_from_db()
    assert skill.version == 3 and skill.state == "active"
    html = client.get(reverse("admin:learning_synthesizedskill_change", args=[skill.pk])).content.decode()
    assert 'id="rollback-button"' not in html


def test_the_skill_page_shows_the_body_and_each_change_as_a_diff(client, lead, seat):
    skill = make_skill(seat)
    client.force_login(lead)

    html = client.get(reverse("admin:learning_synthesizedskill_change", args=[skill.pk])).content.decode()

    assert "v2 → v3" in html and "v1 → v2" in html and "refined to v2" in html
    assert '<span class="d-add">+4. Announce in #releases</span>' in html
    assert '<span class="d-del">-3. Run the smoke tests</span>' in html
    assert 'id="skill-body"' in html and "What practice added" in html


def test_a_skill_cannot_be_added_edited_or_deleted_through_the_admin(client, lead, seat):
    skill = make_skill(seat)
    client.force_login(lead)
    change = reverse("admin:learning_synthesizedskill_change", args=[skill.pk])

    assert client.get(reverse("admin:learning_synthesizedskill_add")).status_code == 403
    client.post(change, {"name": "renamed", "body": "overwritten"})
    assert client.post(reverse("admin:learning_synthesizedskill_delete", args=[skill.pk]), {"post": "yes"}).status_code == 403

    skill.refresh_from_db()
    assert skill.name == "deploy-hotfix" and skill.body == BODY_V3


def test_the_diary_is_viewable_and_filterable_by_seat_but_not_editable(client, lead, seat, other_seat):
    mine = diary.write(seat=seat, content="ana prefers squash merges", kind=DiaryEntry.LONG)
    diary.write(seat=other_seat, content="bo keeps a release log", kind=DiaryEntry.LONG)
    client.force_login(lead)
    changelist = reverse("admin:learning_diaryentry_changelist")

    html = client.get(changelist, {"seat__id__exact": seat.pk}).content.decode()
    assert "ana prefers squash merges" in html and "bo keeps a release log" not in html

    change = reverse("admin:learning_diaryentry_change", args=[mine.pk])
    client.post(change, {"content": "rewritten", "kind": DiaryEntry.LONG, "seat": seat.pk})
    mine.refresh_from_db()
    assert mine.content == "ana prefers squash merges"
    assert client.get(reverse("admin:learning_diaryentry_add")).status_code == 403
    assert client.post(reverse("admin:learning_diaryentry_delete", args=[mine.pk]), {"post": "yes"}).status_code == 403


@pytest.mark.parametrize(
    "model",
    [
        "learning.episode",
        "learning.counterpartyprofile",
        "learning.turn",
        "core.event",
        "learning.duty",
        "learning.skillversion",
        "learning.learninghealth",
    ],
)
def test_the_evidence_tables_offer_no_add(client, lead, model):
    client.force_login(lead)
    app, name = model.split(".")

    assert client.get(reverse(f"admin:{app}_{name}_changelist")).status_code == 200
    assert client.get(reverse(f"admin:{app}_{name}_add")).status_code == 403


def test_the_event_log_shows_who_acted(client, lead, seat):
    skill = make_skill(seat)
    SynthesizedSkill.objects.filter(pk=skill.pk).update(pinned=False)
    client.force_login(lead)
    client.post(curate_url(skill, "pin"))

    html = client.get(reverse("admin:core_event_changelist"), {"name": "admin_action"}).content.decode()

    assert "admin_action" in html and "lena" in html


def test_a_leads_admin_index_groups_the_internals_apart(client, lead):
    import re

    client.force_login(lead)
    html = client.get(reverse("admin:index")).content.decode()

    def module(label):
        found = re.search(rf'<div class="app-{label} module.*?</table>', html, re.S)
        return found.group(0) if found else ""

    assert "Diary entries" in module("learning") and "Synthesized skills" in module("learning")
    for internal in ("Fill minutes", "Duties", "Refresh ledgers", "Prefetch snapshots", "Episode pieces"):
        assert internal not in module("learning"), internal
    assert "Events" not in module("core")


def test_a_skill_never_used_reads_never_used_in_the_list(client, lead, seat):
    from django.utils import timezone

    offered = make_skill(seat, name="offered-only", use_count=0, last_used_at=timezone.now())
    used = make_skill(seat, name="used-once", use_count=1, last_used_at=timezone.now())
    client.force_login(lead)

    html = client.get(reverse("admin:learning_synthesizedskill_changelist")).content.decode()

    rows = {name: html[html.index(name):html.index("</tr>", html.index(name))] for name in (offered.name, used.name)}
    assert "never used" in rows["offered-only"] and "never used" not in rows["used-once"]
