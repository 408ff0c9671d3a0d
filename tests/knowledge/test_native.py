"""The native backend: pages in our tables, embedded on save, searched by vector and text."""

from __future__ import annotations

import pytest

from crewlet.config import schema
from crewlet.errors import BadInput
from knowledge.models import AUTO_DRAFTED_PARENT, Page
from knowledge.pages import MAX_PAGE_BODY_CHARS, MAX_PAGE_TITLE_CHARS, save_page, update_page
from knowledge.searcher import SearchUnavailable, get_searcher, search


def page(container, title, body="", **kw):
    return save_page(container_key=container, title=title, body=body, **kw)


@pytest.fixture
def corpus(db):
    return {
        "deploy": page("ENG", "Deploy runbook", "Ship with a canary release, watch error rates, roll back fast."),
        "oncall": page("OPS", "On-call handbook", "Who to page when the pager fires at night."),
        "plat": page("PLAT", "Platform deploy guide", "Deploy the platform cluster with helm."),
        "style": page("ENG", "Code style", "Prefer small functions and clear names."),
    }


def test_a_saved_page_is_embedded_in_the_same_write(db):
    p = page("ENG", "Deploy runbook", "canary then rollback")
    stored = Page.objects.get(pk=p.pk)
    assert stored.embedding is not None and stored.embedding_model == "hashing-256" and stored.embedding_dim == 256


def test_an_edited_page_is_re_embedded(db):
    p = page("ENG", "Deploy runbook", "canary then rollback")
    before = list(Page.objects.get(pk=p.pk).embedding)
    update_page(page=p, body="completely different words about databases")
    assert list(Page.objects.get(pk=p.pk).embedding) != before


def test_a_page_over_its_limits_is_refused_naming_the_limit(db):
    with pytest.raises(BadInput, match=str(MAX_PAGE_TITLE_CHARS)):
        page("ENG", "t" * (MAX_PAGE_TITLE_CHARS + 1))
    with pytest.raises(BadInput, match=str(MAX_PAGE_BODY_CHARS)):
        page("ENG", "ok", "b" * (MAX_PAGE_BODY_CHARS + 1))
    assert Page.objects.count() == 0


def test_search_finds_pages_by_text_and_vector_in_the_readable_containers(seat, serve_native, corpus):
    serve_native(scope=["ENG", "OPS"])
    result = search(seat, "deploy canary", 5)
    assert result.served_mode == "hybrid"
    assert result.pages[0].title == "Deploy runbook"
    assert result.pages[0].page_id == str(corpus["deploy"].pk) and result.pages[0].container_key == "ENG"
    assert "canary" in result.pages[0].snippet


def test_pages_outside_the_scope_are_never_returned(seat, serve_native, corpus):
    serve_native(scope=["OPS"])
    result = search(seat, "deploy", 10)
    assert "Platform deploy guide" not in {p.title for p in result.pages}
    assert "Deploy runbook" not in {p.title for p in result.pages}


def test_a_page_in_the_seats_own_unit_container_is_not_readable_unless_in_scope(seat, serve_native, corpus):
    # the unit's container is where its drafts go, not read scope (spec: no per-unit/role union)
    seat.unit.knowledge_container = "PLAT"
    seat.unit.save()
    serve_native(scope=["ENG"])
    assert "Platform deploy guide" not in {p.title for p in search(seat, "platform helm", 10).pages}


def test_drafts_are_never_returned(seat, serve_native, corpus):
    parent = page("ENG", AUTO_DRAFTED_PARENT, "deploy drafts live here")
    page("ENG", "[Auto-draft] Deploy procedure", "deploy canary", parent=parent, state=Page.DRAFT)
    page("ENG", "Published-looking deploy child", "deploy canary", parent=parent)
    middle = page("ENG", "Deploy folder", "deploy", parent=parent)
    deep = middle
    for depth in range(6):
        deep = page("ENG", f"Deploy nested {depth}", "deploy canary", parent=deep)
    page("ENG", "Deploy state draft", "deploy canary", state=Page.DRAFT)
    page("ENG", "[Auto-draft] Loose deploy", "deploy canary")
    serve_native(scope=["ENG"])

    result = search(seat, "deploy canary", 20)

    assert [p.title for p in result.pages] == ["Deploy runbook"]


def test_drafts_never_crowd_a_published_page_out_of_the_limit(seat, serve_native, corpus):
    parent = page("ENG", AUTO_DRAFTED_PARENT, "")
    for i in range(6):
        page("ENG", f"Deploy canary rollback {i}", "deploy canary rollback deploy canary", parent=parent)
    serve_native(scope=["ENG"])
    assert [p.title for p in search(seat, "deploy canary rollback", 1).pages] == ["Deploy runbook"]


def test_a_query_that_cannot_be_embedded_is_still_searched_by_text(seat, serve_native, corpus):
    serve_native(
        scope=["ENG"],
        providers=schema.Providers(
            llm={"offline": schema.ProviderSpec(kind="offline")}, embeddings=schema.EmbeddingSpec(kind="none")
        ),
    )
    result = search(seat, "canary", 5)
    assert result.served_mode == "text"
    assert [p.title for p in result.pages] == ["Deploy runbook"]


def test_a_query_is_searched_by_its_content_words_not_its_stopwords(seat, serve_native, corpus):
    serve_native(
        scope=["ENG", "OPS"],
        providers=schema.Providers(
            llm={"offline": schema.ProviderSpec(kind="offline")}, embeddings=schema.EmbeddingSpec(kind="none")
        ),
    )
    # "to" is in the on-call page alone ("Who to page ..."): a rare word, had stopwords been searched
    result = search(seat, "what to do with a canary", 5)
    assert [p.title for p in result.pages] == ["Deploy runbook"]


def test_a_search_that_ran_and_matched_nothing_still_has_a_served_mode(seat, serve_native, corpus):
    serve_native(scope=["ENG"])
    result = search(seat, "zebra quantum xylophone", 5)
    assert result.ran and result.pages == []


def test_an_empty_scope_searches_nothing(seat, serve_native, corpus):
    serve_native(scope=[])
    assert get_searcher().can_search(seat) is False
    result = search(seat, "deploy", 5)
    assert result.served_mode == "" and result.unavailable is SearchUnavailable.SCOPED_TO_NOTHING


def test_can_search_does_no_io(seat, serve_native, django_assert_num_queries):
    serve_native(scope=["ENG"])
    searcher = get_searcher()
    with django_assert_num_queries(0):
        assert searcher.can_search(seat) is True


def test_an_unreadable_table_serves_no_mode(seat, serve_native, corpus, monkeypatch):
    from django.db import DatabaseError

    from knowledge.backends import native

    def broken(*args, **kwargs):
        raise DatabaseError("no such table")

    monkeypatch.setattr(native.hybrid, "ranked", broken)
    serve_native(scope=["ENG"])
    result = search(seat, "deploy", 5)
    assert result.served_mode == "" and result.unavailable is SearchUnavailable.UNREACHABLE


def test_limit_is_respected(seat, serve_native, db):
    for i in range(8):
        page("ENG", f"Deploy note {i}", "deploy canary")
    serve_native(scope=["ENG"])
    assert len(search(seat, "deploy", 3).pages) == 3


def test_pages_are_ranked_by_the_querys_words_while_it_embeds(seat, serve_native, corpus, monkeypatch):
    """A ranking by words needs no vector: it runs while the query embeds, and the search uses it."""
    from tests.embed_waits import ranked_while_embedding

    serve_native(scope=["ENG", "OPS"])
    result, meanwhile, ranked = ranked_while_embedding(
        {"knowledge_page"}, monkeypatch, lambda: search(seat, "deploy canary", 5))

    assert meanwhile is True
    assert ranked == ["knowledge_page"]  # the search used that ranking
    assert result.served_mode == "hybrid" and result.pages[0].title == "Deploy runbook"
