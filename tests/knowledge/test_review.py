"""Publishing and rejecting auto-drafted pages (the services)."""

import pytest

from core.models import Event
from crewlet.config import schema
from crewlet.errors import Conflict, Forbidden
from knowledge import review
from knowledge.models import AUTO_DRAFTED_PARENT, Page
from tests.review_fixtures import drafts_parent, make_draft

pytestmark = pytest.mark.django_db


def test_publishing_moves_the_draft_to_the_container_root_published_and_embedded(lead):
    draft = make_draft()

    page = review.publish_draft(page=draft, user=lead)

    page.refresh_from_db()
    assert page.parent is None
    assert page.state == Page.PUBLISHED
    assert page.title == "Deploy a hotfix"  # the [Auto-draft] backstop would hide it from search
    assert page.embedding_model == "hashing-256" and page.embedding_dim == 256 and page.embedding
    assert not review.review_queue().filter(pk=page.pk).exists()


def test_publishing_announces_the_page_and_the_acting_user(lead):
    draft = make_draft(seats=("ana", "bo", "cy"))

    review.publish_draft(page=draft, user=lead)

    published = Event.objects.get(name="knowledge_draft_published")
    assert published.payload["user"] == "lena"
    assert published.payload["page_id"] == draft.pk
    assert published.payload["container_key"] == "ENG"
    assert published.payload["seats"] == ["ana", "bo", "cy"]
    audit = Event.objects.get(name="admin_action")
    assert audit.payload["user"] == "lena" and audit.payload["action"] == "publish_draft"


def test_publishing_files_under_the_parent_the_writer_intended(lead):
    runbooks = Page.objects.create(container_key="ENG", title="Runbooks", state=Page.PUBLISHED)
    draft = make_draft(intended_parent_id=runbooks.pk)

    page = review.publish_draft(page=draft, user=lead)

    assert page.parent_id == runbooks.pk


def test_an_intended_parent_inside_the_drafts_subtree_falls_back_to_the_root(lead):
    other = make_draft(title="Another draft")
    draft = make_draft(intended_parent_id=other.pk)

    assert review.publish_draft(page=draft, user=lead).parent is None


def test_publishing_refuses_a_title_the_container_already_has(lead):
    Page.objects.create(container_key="ENG", title="Deploy a hotfix", state=Page.PUBLISHED)
    draft = make_draft()

    with pytest.raises(Conflict, match="already has a page titled"):
        review.publish_draft(page=draft, user=lead)

    draft.refresh_from_db()
    assert draft.state == Page.DRAFT and draft.parent.title == AUTO_DRAFTED_PARENT
    assert not Event.objects.filter(name="knowledge_draft_published").exists()


def test_a_published_page_cannot_be_published_or_rejected_again(lead):
    page = review.publish_draft(page=make_draft(), user=lead)

    with pytest.raises(Conflict):
        review.publish_draft(page=page, user=lead)
    with pytest.raises(Conflict):
        review.reject_draft(page=page, user=lead)
    assert Page.objects.filter(pk=page.pk).exists()


def test_publishing_without_an_embedder_still_publishes_vectorless(lead, serve_config):
    serve_config(providers=schema.Providers(embeddings=schema.EmbeddingSpec(kind="none")))

    page = review.publish_draft(page=make_draft(), user=lead)

    assert page.state == Page.PUBLISHED and page.embedding is None
    assert Event.objects.get(name="knowledge_draft_published").payload["embedding"] == "unconfigured"


def test_rejecting_deletes_the_draft_and_remembers_nothing(lead):
    draft = make_draft()
    pk = draft.pk

    review.reject_draft(page=draft, user=lead)

    assert not Page.objects.filter(pk=pk).exists()
    rejected = Event.objects.get(name="knowledge_draft_rejected")
    assert rejected.payload["user"] == "lena" and rejected.payload["page_id"] == pk
    # the team converging again drafts the same page afresh: nothing blocks the title
    again = make_draft()
    assert review.review_queue().filter(pk=again.pk).exists()


def test_a_staff_user_who_is_not_a_lead_cannot_publish_or_reject(staff_user):
    draft = make_draft()

    with pytest.raises(Forbidden, match="publish_page"):
        review.publish_draft(page=draft, user=staff_user)
    with pytest.raises(Forbidden):
        review.reject_draft(page=draft, user=staff_user)

    draft.refresh_from_db()
    assert draft.state == Page.DRAFT
    assert not Event.objects.exists()


def test_the_drafts_folder_is_not_in_the_queue_and_cannot_be_rejected(lead):
    parent = drafts_parent()
    parent.state = Page.DRAFT
    parent.save()
    make_draft()

    assert list(review.review_queue().values_list("title", flat=True)) == ["[Auto-draft] Deploy a hotfix"]
    with pytest.raises(Conflict, match="folder"):
        review.reject_draft(page=parent, user=lead)
    assert Page.objects.filter(parent=parent).count() == 1


def test_changing_a_published_page_needs_the_publish_permission(staff_user, lead):
    from knowledge.review import save_page

    page = Page.objects.create(container_key="ENG", title="Runbook", body="Run the runbook.", state=Page.PUBLISHED)
    page.body = "Edited by someone who is not a lead."
    with pytest.raises(Forbidden) as refused:
        save_page(page=page, user=staff_user, created=False)
    assert "knowledge.publish_page" in refused.value.message
    assert Page.objects.get(pk=page.pk).body == "Run the runbook."
    page.body = "Edited by the lead."
    save_page(page=page, user=lead, created=False)
    assert Page.objects.get(pk=page.pk).body == "Edited by the lead."
