"""Both PromotionWriters behave the same: a draft beneath Auto-Drafted Skills, refused otherwise, title dedup."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.db import DatabaseError

from crewlet.config import schema
from knowledge.backends.confluence import ConfluencePromotionWriter
from knowledge.backends.native import NativePromotionWriter
from knowledge.models import AUTO_DRAFTED_PARENT, Page
from knowledge.pages import save_page
from knowledge.promotion_writer import (
    Draft,
    DraftRefused,
    WriteFailed,
    get_promotion_writer,
    render_markdown,
    render_storage,
)

DRAFT = Draft(
    title="Platform procedure: git_diff, open_pr, run_tests",
    summary="Run the tests <before> opening a PR & say so.",
    when_to_use="Before any merge request.",
    steps=("Call run_tests.", "Call git_diff.", "Call open_pr."),
    tools=("git_diff", "open_pr", "run_tests"),
    source={"skills": [{"id": 1, "name": "ship-it", "seat": "ana"}, {"id": 2, "name": "pr-flow", "seat": "bo"}],
            "seats": ["ana", "bo"]},
)


@dataclass
class Store:
    """One backend's pages seen the same way: (title, parent title or None) per container."""

    kind: str
    writer: object
    fake: object = None

    def pages(self, container):
        if self.kind == "native":
            return sorted(
                (p.title, p.parent.title if p.parent else None) for p in Page.objects.filter(container_key=container)
            )
        return sorted(
            (p.title, self.fake.pages[p.ancestors[-1]].title if p.ancestors else None)
            for p in self.fake.pages.values()
            if p.space == container
        )

    def refuse_parent(self, monkeypatch):
        if self.kind == "confluence":
            self.fake.refuse_parent = True
            return

        def refuse(self_, container_key):
            raise DatabaseError("permission denied for relation knowledge_page")

        monkeypatch.setattr(NativePromotionWriter, "ensure_parent", refuse)

    def publish(self, container, title):
        """What a lead does: the page leaves the drafts parent under its bare title."""
        if self.kind == "native":
            save_page(container_key=container, title=title, body="adopted")
        else:
            self.fake.add_page(container, title, "adopted")


@pytest.fixture(params=["native", "confluence"])
def store(request, db, serve_native, serve_confluence):
    if request.param == "native":
        serve_native(scope=["ENG"])
        return Store("native", get_promotion_writer())
    fake = request.getfixturevalue("fake_confluence")
    serve_confluence(fake.url, scope=["ENG"])
    return Store("confluence", get_promotion_writer(), fake)


def test_the_writer_matches_the_backend(store):
    expected = NativePromotionWriter if store.kind == "native" else ConfluencePromotionWriter
    assert isinstance(store.writer, expected)


def test_no_writer_when_knowledge_is_off(serve_config):
    serve_config(knowledge=schema.Knowledge(backend="none"))
    assert get_promotion_writer() is None


def test_a_draft_is_filed_beneath_a_created_auto_drafted_skills_parent(store):
    outcome = store.writer.write_draft(container_key="PLAT", draft=DRAFT)
    assert outcome.existed is False and outcome.container_key == "PLAT"
    assert outcome.page_title == f"[Auto-draft] {DRAFT.title}" and outcome.page_id
    assert store.pages("PLAT") == [(AUTO_DRAFTED_PARENT, None), (outcome.page_title, AUTO_DRAFTED_PARENT)]


def test_an_existing_parent_is_reused(store):
    store.writer.write_draft(container_key="PLAT", draft=DRAFT)
    other = Draft(title="Platform procedure: deploy", summary="Deploy it.")
    store.writer.write_draft(container_key="PLAT", draft=other)
    parents = [t for t, parent in store.pages("PLAT") if t == AUTO_DRAFTED_PARENT]
    assert parents == [AUTO_DRAFTED_PARENT]
    assert len(store.pages("PLAT")) == 3


def test_a_second_write_of_the_same_title_returns_the_existing_page(store):
    first = store.writer.write_draft(container_key="PLAT", draft=DRAFT)
    second = store.writer.write_draft(container_key="PLAT", draft=DRAFT)
    assert second.existed is True and second.page_id == first.page_id
    assert len(store.pages("PLAT")) == 2


def test_a_published_page_under_the_bare_title_counts_as_existing(store):
    store.publish("PLAT", DRAFT.title)
    outcome = store.writer.write_draft(container_key="PLAT", draft=DRAFT)
    assert outcome.existed is True and outcome.page_title == DRAFT.title
    assert store.pages("PLAT") == [(DRAFT.title, None)]


def test_the_draft_is_refused_rather_than_filed_at_the_root_when_the_parent_cannot_be_created(store, monkeypatch):
    store.refuse_parent(monkeypatch)
    with pytest.raises(DraftRefused, match="not filed at the"):
        store.writer.write_draft(container_key="PLAT", draft=DRAFT)
    assert store.pages("PLAT") == []


def test_the_draft_records_where_it_came_from(store):
    outcome = store.writer.write_draft(container_key="PLAT", draft=DRAFT)
    if store.kind == "native":
        page = Page.objects.get(pk=outcome.page_id)
        assert page.state == Page.DRAFT and page.source == DRAFT.source
        body = page.body
    else:
        body = store.fake.pages[outcome.page_id].body
    assert "ana: ship-it (skill 1)" in body and "bo: pr-flow (skill 2)" in body


def test_confluence_posts_escaped_storage_xhtml(db, serve_confluence, fake_confluence):
    serve_confluence(fake_confluence.url, scope=["ENG"])
    get_promotion_writer().write_draft(container_key="PLAT", draft=DRAFT)
    parent_post, draft_post = fake_confluence.posts()
    assert parent_post.body["title"] == AUTO_DRAFTED_PARENT and "ancestors" not in parent_post.body
    body = draft_post.body
    assert body["space"] == {"key": "PLAT"} and body["type"] == "page"
    assert body["ancestors"] == [{"type": "page", "id": fake_confluence.find("PLAT", AUTO_DRAFTED_PARENT).id}]
    assert body["body"]["storage"]["representation"] == "storage"
    value = body["body"]["storage"]["value"]
    assert "<p>Run the tests &lt;before&gt; opening a PR &amp; say so.</p>" in value
    assert "<ol><li>Call run_tests.</li><li>Call git_diff.</li><li>Call open_pr.</li></ol>" in value


def test_confluence_writes_as_the_org_credential(db, serve_confluence, fake_confluence):
    serve_confluence(fake_confluence.url, scope=["ENG"], username="crewlet-bot")
    get_promotion_writer().write_draft(container_key="PLAT", draft=DRAFT)
    assert {r.auth for r in fake_confluence.requests} == {"crewlet-bot"}


def test_an_unreachable_confluence_fails_the_write(db, serve_confluence, fake_confluence):
    fake_confluence.mode = "error"
    serve_confluence(fake_confluence.url, scope=["ENG"])
    with pytest.raises(WriteFailed):
        get_promotion_writer().write_draft(container_key="PLAT", draft=DRAFT)
    assert fake_confluence.posts() == []


def test_a_page_never_repeats_its_summary_under_when_to_use():
    said = Draft(title="Ship a PR", summary="3 agents arrived at this. Run the tests, then open a PR.",
                 when_to_use="Run the tests, then open a PR.", steps=("Call run_tests.", "Call open_pr."))
    new = Draft(title="Ship a PR", summary="3 agents arrived at this.", when_to_use="Before asking for review.")

    assert "When to use" not in render_markdown(said) and "When to use" not in render_storage(said)
    assert "## When to use\n\nBefore asking for review." in render_markdown(new)


def test_the_numbered_steps_call_the_tools_the_title_names_and_the_rest_stand_apart():
    draft = Draft(title="Platform procedure: git_diff, open_pr, run_tests", summary="Three seats converged.",
                  steps=("Call git_diff.", "Call run_tests.", "Call open_pr.", "Call post_message."),
                  tools=("git_diff", "run_tests", "open_pr", "post_message"),
                  source={"tool_set": ["git_diff", "open_pr", "run_tests"]})

    body = render_markdown(draft)

    assert "## Steps\n\n1. Call git_diff.\n2. Call run_tests.\n3. Call open_pr.\n\n## Some seats also\n\n- Call post_message." in body
    assert "<ol><li>Call git_diff.</li><li>Call run_tests.</li><li>Call open_pr.</li></ol>" in render_storage(draft)
