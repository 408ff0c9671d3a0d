"""The review queue in the Django admin: what a lead sees and does, and what a non-lead cannot."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.urls import reverse

from core.models import Event
from knowledge.models import Page
from knowledge.review import review_queue
from knowledge.searcher import search_knowledge_answer
from tests.factories import SeatFactory
from tests.review_fixtures import make_draft

pytestmark = pytest.mark.django_db

QUEUE = reverse("admin:knowledge_draftpage_changelist")


def test_the_queue_lists_drafts_with_the_skills_and_seats_they_came_from(client, lead):
    make_draft(title="Deploy a hotfix", seats=("ana", "bo", "cy"))
    published = Page.objects.create(container_key="ENG", title="Release calendar", state=Page.PUBLISHED)
    client.force_login(lead)

    html = client.get(QUEUE).content.decode()

    assert "[Auto-draft] Deploy a hotfix" in html
    assert "3: " in html and "ana:deploy-hotfix" in html
    for handle in ("ana", "bo", "cy"):  # each seat links to its memory
        assert f'<a href="/learning/seats/{handle}/memory/">{handle}</a>' in html
    assert published.title not in html
    assert "Publish selected drafts" in html


def test_the_draft_page_renders_the_body_and_strips_anything_executable(client, lead):
    draft = make_draft(body="# Steps\n\n- run `make deploy`\n<script>alert(1)</script>")
    client.force_login(lead)

    html = client.get(reverse("admin:knowledge_draftpage_change", args=[draft.pk])).content.decode()

    assert "<h1>Steps</h1>" in html and "<code>make deploy</code>" in html
    assert "<script>alert(1)</script>" not in html
    assert 'id="publish-draft"' in html and 'id="reject-draft"' in html


def test_a_lead_publishes_with_the_per_object_button(client, lead):
    draft = make_draft()
    client.force_login(lead)

    response = client.post(reverse("admin:knowledge_draftpage_publish", args=[draft.pk]))

    assert response.status_code == 302 and response["Location"] == reverse("admin:knowledge_page_change", args=[draft.pk])
    draft.refresh_from_db()
    assert draft.state == Page.PUBLISHED and draft.parent is None
    assert Event.objects.get(name="knowledge_draft_published").payload["user"] == "lena"


def test_a_lead_publishes_and_rejects_with_the_bulk_actions(client, lead):
    keep, drop = make_draft(title="Keep me"), make_draft(title="Drop me")
    client.force_login(lead)

    client.post(QUEUE, {"action": "publish_selected", "_selected_action": [keep.pk]})
    client.post(QUEUE, {"action": "reject_selected", "_selected_action": [drop.pk]})

    keep.refresh_from_db()
    assert keep.state == Page.PUBLISHED
    assert not Page.objects.filter(pk=drop.pk).exists()
    assert sorted(e.payload["action"] for e in Event.objects.filter(name="admin_action")) == ["publish_draft", "reject_draft"]


def test_the_reject_button_deletes_the_draft(client, lead):
    draft = make_draft()
    client.force_login(lead)

    client.post(reverse("admin:knowledge_draftpage_reject", args=[draft.pk]))

    assert not Page.objects.filter(pk=draft.pk).exists()
    assert Event.objects.get(name="knowledge_draft_rejected").payload["user"] == "lena"


def test_a_non_lead_gets_403_from_the_publish_and_reject_buttons(client, staff_user):
    draft = make_draft()
    client.force_login(staff_user)

    assert client.post(reverse("admin:knowledge_draftpage_publish", args=[draft.pk])).status_code == 403
    assert client.post(reverse("admin:knowledge_draftpage_reject", args=[draft.pk])).status_code == 403

    draft.refresh_from_db()
    assert draft.state == Page.DRAFT
    assert not Event.objects.exists()


def test_a_non_lead_is_not_offered_the_publish_action_and_a_forced_one_is_refused(client, staff_user):
    draft = make_draft()
    client.force_login(staff_user)

    html = client.get(QUEUE).content.decode()
    assert "Publish selected drafts" not in html
    detail = client.get(reverse("admin:knowledge_draftpage_change", args=[draft.pk])).content.decode()
    assert 'id="publish-draft"' not in detail and "Only a lead" in detail

    client.post(QUEUE, {"action": "publish_selected", "_selected_action": [draft.pk]})
    draft.refresh_from_db()
    assert draft.state == Page.DRAFT


def test_published_pages_are_listed_with_the_drafts_in_the_pages_admin(client, lead):
    make_draft(title="Pending")
    Page.objects.create(container_key="ENG", title="Onboarding", state=Page.PUBLISHED)
    client.force_login(lead)

    html = client.get(reverse("admin:knowledge_page_changelist")).content.decode()

    assert "Onboarding" in html and "[Auto-draft] Pending" in html


def test_the_publish_button_only_answers_post(client, lead):
    draft = make_draft()
    client.force_login(lead)

    assert client.get(reverse("admin:knowledge_draftpage_publish", args=[draft.pk])).status_code == 405


def test_editing_a_published_page_re_embeds_it_and_records_the_editor(client, lead):
    page = Page.objects.create(container_key="ENG", title="Onboarding", body="old", state=Page.PUBLISHED)
    client.force_login(lead)

    client.post(
        reverse("admin:knowledge_page_change", args=[page.pk]),
        {"container_key": "ENG", "title": "Onboarding", "state": "published", "body": "Start with the runbook.", "labels": "[]",
         "author": ""},
    )

    page.refresh_from_db()
    assert page.body == "Start with the runbook." and page.embedding_model == "hashing-256"
    event = Event.objects.get(name="admin_action")
    assert (event.payload["action"], event.payload["user"]) == ("change_page", "lena")


def test_deleting_pages_in_the_admin_is_recorded_and_never_sweeps_drafts_away(client, lead):
    old = Page.objects.create(container_key="ENG", title="Old page", state=Page.PUBLISHED)
    draft = make_draft()
    client.force_login(lead)
    changelist = reverse("admin:knowledge_page_changelist")

    client.post(changelist, {"action": "delete_selected", "_selected_action": [old.pk], "post": "yes"})
    client.post(changelist, {"action": "delete_selected", "_selected_action": [draft.parent_id], "post": "yes"})

    assert not Page.objects.filter(pk=old.pk).exists()
    assert Page.objects.filter(pk=draft.pk).exists()  # the drafts folder holding it was refused
    event = Event.objects.get(name="admin_action")
    assert (event.payload["action"], event.payload["user"], event.payload["detail"]["page_title"]) == ("delete_page", "lena", "Old page")


def test_a_non_lead_cannot_flip_a_draft_to_published_through_the_page_form(client, staff_user):
    draft = make_draft()
    client.force_login(staff_user)

    client.post(
        reverse("admin:knowledge_page_change", args=[draft.pk]),
        {"container_key": "ENG", "title": "Deploy a hotfix", "state": "published", "body": "x", "labels": "[]", "author": ""},
    )

    draft.refresh_from_db()
    assert draft.state == Page.DRAFT and draft.title.startswith("[Auto-draft]")
    assert not Event.objects.filter(name="knowledge_draft_published").exists()


@pytest.fixture
def editor(db):
    """Staff with add/change/view on pages but not ``knowledge.publish_page`` (not a lead)."""
    user = get_user_model().objects.create_user("eddie", password="pw-eddie-1234", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="knowledge",
                                                        codename__in=["add_page", "change_page", "view_page"]))
    return user


NEW_PAGE = {"container_key": "ENG", "title": "Rotate the keys", "state": "published", "body": "Run the rotation job.",
            "labels": "[]", "author": ""}


def test_a_non_lead_cannot_create_a_page_already_published_it_waits_for_a_lead(client, editor, lead):
    client.force_login(editor)
    form = client.get(reverse("admin:knowledge_page_add")).content.decode()
    assert 'name="state"' not in form  # not settable in the form

    response = client.post(reverse("admin:knowledge_page_add"), NEW_PAGE)

    assert response.status_code == 302
    page = Page.objects.get(title="Rotate the keys")
    assert page.state == Page.DRAFT and page.embedding_model == ""
    assert page in review_queue()

    client.force_login(lead)
    client.post(reverse("admin:knowledge_draftpage_publish", args=[page.pk]))
    page.refresh_from_db()
    assert page.state == Page.PUBLISHED
    assert Event.objects.get(name="knowledge_draft_published").payload["user"] == "lena"


def test_a_non_lead_sees_a_published_page_read_only_and_is_refused_a_change(client, editor):
    page = Page.objects.create(container_key="ENG", title="Runbook", body="Run the runbook.", state=Page.PUBLISHED)
    client.force_login(editor)
    url = reverse("admin:knowledge_page_change", args=[page.pk])

    form = client.get(url)
    assert form.status_code == 200
    assert 'name="body"' not in form.content.decode() and 'name="_save"' not in form.content.decode()

    response = client.post(url, {**NEW_PAGE, "title": "Runbook", "state": "draft", "body": "Edited."})

    assert response.status_code == 403
    page.refresh_from_db()
    assert page.body == "Run the runbook." and page.state == Page.PUBLISHED
    assert not Event.objects.filter(name="admin_action", payload__action="change_page").exists()


def test_a_non_lead_may_still_edit_their_own_page_waiting_for_review(client, editor):
    client.force_login(editor)
    client.post(reverse("admin:knowledge_page_add"), NEW_PAGE)
    page = Page.objects.get(title="Rotate the keys")
    assert page.state == Page.DRAFT
    form = client.get(reverse("admin:knowledge_page_change", args=[page.pk])).content.decode()
    assert 'name="body"' not in form  # a draft's decision is the review's: read-only here too


def test_a_leads_new_page_is_published_since_they_hold_the_publish_permission(client, lead):
    client.force_login(lead)
    client.post(reverse("admin:knowledge_page_add"), {**NEW_PAGE, "state": "draft"})
    page = Page.objects.get(title="Rotate the keys")
    assert page.state == Page.PUBLISHED and page.embedding_model == "hashing-256"


def test_publishing_names_the_agents_who_can_now_find_the_page_and_they_do(client, lead, serve_native):
    serve_native(scope=["ENG", "PLAT"])
    ana, bo = SeatFactory(handle="ana"), SeatFactory(handle="bo")
    draft = make_draft(container="PLAT", title="Ship a reviewed PR", body="Run the tests, then open the PR for review.")
    client.force_login(lead)

    response = client.post(reverse("admin:knowledge_draftpage_publish", args=[draft.pk]), follow=True)

    html = response.content.decode()
    assert "to PLAT; the agents of ana, bo can now find it with search_knowledge" in html
    assert "the agents of ana, bo can find it with search_knowledge" in html  # the page says who reads it
    for seat in (ana, bo):
        assert "Ship a reviewed PR" in search_knowledge_answer(seat, "open the PR for review").text


def test_publishing_where_no_seat_reads_says_so_and_how_to_widen_the_scope(client, lead, serve_native):
    serve_native(scope=["ENG"])
    SeatFactory(handle="ana")
    draft = make_draft(container="PLAT", title="Ship a reviewed PR")
    client.force_login(lead)

    html = client.post(reverse("admin:knowledge_draftpage_publish", args=[draft.pk]), follow=True).content.decode()

    assert "agents can now find it" not in html and "the agents of" not in html
    assert "no agent can find it yet: PLAT is not in any seat&#x27;s read scope" in html
    assert "add &quot;PLAT&quot; to knowledge.scope" in html


def test_labels_are_edited_as_words_separated_by_commas(client, lead):
    page = Page.objects.create(container_key="ENG", title="Onboarding", body="old", state=Page.PUBLISHED,
                               labels=["deploy", "runbook"])
    client.force_login(lead)
    url = reverse("admin:knowledge_page_change", args=[page.pk])

    assert 'value="deploy, runbook"' in client.get(url).content.decode()
    client.post(url, {"container_key": "ENG", "title": "Onboarding", "body": "old", "labels": "deploy, on-call ,",
                      "author": ""})

    page.refresh_from_db()
    assert page.labels == ["deploy", "on-call"]
