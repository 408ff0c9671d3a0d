"""A lead edits a draft before publishing (each edit a version naming them), then follows it to the published page."""

import pytest
from django.urls import reverse

from core import events
from core.event_types import AdminAction
from knowledge.models import Page, PageVersion
from tests.review_fixtures import make_draft, make_skill

pytestmark = pytest.mark.django_db


def test_an_edit_is_a_version_naming_the_lead_and_the_draft_stays_in_the_queue(client, lead):
    draft = make_draft(body="# Deploy\n\n1. Open the branch\n")
    client.force_login(lead)

    response = client.post(reverse("admin:knowledge_draftpage_edit", args=[draft.pk]),
                           {"title": draft.title, "body": "# Deploy\n\n1. Open the release branch\n2. Run smoke tests\n"})

    assert response.status_code == 302
    draft.refresh_from_db()
    assert draft.state == Page.DRAFT and "Run smoke tests" in draft.body
    assert [(v.number, v.author) for v in PageVersion.objects.filter(page=draft).order_by("number")] == [
        (1, "crewlet-promotion"), (2, "lena")]
    audit = events.latest(AdminAction).event
    assert (audit.user, audit.action, audit.detail["version"]) == ("lena", "edit_draft", 2)
    html = client.get(reverse("admin:knowledge_draftpage_change", args=[draft.pk])).content.decode()
    assert "v2 by <strong>lena</strong>" in html and "v1 by <strong>crewlet-promotion</strong>" in html


def test_a_bad_edit_names_the_field_and_a_non_lead_cannot_edit(client, lead, staff_user):
    draft = make_draft()
    client.force_login(lead)
    response = client.post(reverse("admin:knowledge_draftpage_edit", args=[draft.pk]), {"title": draft.title, "body": " "})
    assert response.status_code == 400 and "body: a draft needs a body" in response.content.decode()

    client.force_login(staff_user)
    assert client.get(reverse("admin:knowledge_draftpage_edit", args=[draft.pk])).status_code == 403
    assert not PageVersion.objects.exists()


def test_provenance_links_to_skills_seats_and_turns_and_publishing_lands_on_the_page(client, lead, seat):
    skill = make_skill(seat)
    draft = make_draft(seats=("ana",), skills_=[{"id": skill.pk, "name": skill.name, "seat": "ana", "turn": "run-3"}])
    client.force_login(lead)

    html = client.get(reverse("admin:knowledge_draftpage_change", args=[draft.pk])).content.decode()
    assert reverse("admin:learning_synthesizedskill_change", args=[skill.pk]) in html
    assert reverse("learning_pages:memory", args=["ana"]) in html
    assert reverse("learning_pages:turn", args=["ana", "run-3"]) in html
    assert "{'id'" not in html

    response = client.post(reverse("admin:knowledge_draftpage_publish", args=[draft.pk]), follow=True)

    assert response.redirect_chain[-1][0] == reverse("admin:knowledge_page_change", args=[draft.pk])
    assert 'id="published-link"' in response.content.decode()
