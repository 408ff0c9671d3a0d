"""The Searcher seam: backend resolution, the honest answers, and the knowledge_read event."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from core.models import Event
from crewlet.config import schema
from knowledge.backends.confluence import ConfluenceSearcher
from knowledge.backends.native import NativeSearcher
from knowledge.pages import save_page
from knowledge.searcher import NoSearcher, get_searcher, reset_searcher, search_knowledge_answer
from tests.fakes.confluence_server import closed_port_url


@pytest.mark.parametrize(
    "alias, kind", [("native", NativeSearcher), ("confluence", ConfluenceSearcher), ("none", NoSearcher)]
)
def test_the_backend_is_resolved_from_knowledge_backend(serve_config, alias, kind):
    serve_config(knowledge=schema.Knowledge(backend=alias))
    assert isinstance(get_searcher(), kind)


def test_the_backend_is_cached_until_reset_or_the_config_changes(serve_config):
    serve_config(knowledge=schema.Knowledge(backend="native", scope=["ENG"]))
    first = get_searcher()
    assert get_searcher() is first
    reset_searcher()
    second = get_searcher()
    assert second is not first
    serve_config(knowledge=schema.Knowledge(backend="native", scope=["OPS"]))
    assert get_searcher() is not second


def test_a_bad_alias_raises_naming_it(serve_config):
    with pytest.raises(ValueError, match="sharepoint"):
        schema.Knowledge(backend="sharepoint")  # the typed config refuses it; the seam still guards
    knowledge = schema.Knowledge()
    object.__setattr__(knowledge, "backend", "sharepoint")
    serve_config(knowledge=knowledge)
    with pytest.raises(ImproperlyConfigured, match="sharepoint"):
        get_searcher()


def test_search_knowledge_lists_the_pages_it_found(seat, serve_native):
    p = save_page(container_key="ENG", title="Deploy runbook", body="canary then rollback")
    serve_native(scope=["ENG"])
    answer = search_knowledge_answer(seat, "canary rollback").text
    assert "Deploy runbook" in answer and f"page {p.pk}" in answer and "[ENG" in answer


def test_search_knowledge_that_found_nothing_says_it_searched(seat, serve_native, db):
    serve_native(scope=["ENG"])
    answer = search_knowledge_answer(seat, "canary").text
    assert "was searched" in answer and "could not be searched" not in answer


def test_search_knowledge_on_an_unconfigured_backend_says_so(seat, serve_config):
    serve_config(knowledge=schema.Knowledge(backend="none"))
    answer = search_knowledge_answer(seat, "canary").text
    assert "could not be searched" in answer and "no knowledge backend is configured" in answer


def test_search_knowledge_scoped_to_nothing_says_so(seat, serve_native):
    serve_native(scope=[])
    answer = search_knowledge_answer(seat, "canary").text
    assert "could not be searched" in answer and "knowledge.scope is empty" in answer


def test_search_knowledge_on_an_unreachable_backend_says_so_not_nothing_found(seat, serve_confluence):
    serve_confluence(closed_port_url(), scope=["ENG"])
    answer = search_knowledge_answer(seat, "canary").text
    assert "could not be reached" in answer and "says nothing about whether a page exists" in answer
    assert "was searched" not in answer


def test_an_empty_query_is_answered_without_a_search(seat, serve_native, db):
    serve_native(scope=["ENG"])
    assert "needs a query" in search_knowledge_answer(seat, "   ").text
    assert not Event.objects.filter(name="knowledge_read").exists()


def test_each_read_publishes_knowledge_read_naming_the_pages(seat, serve_native):
    p = save_page(container_key="ENG", title="Deploy runbook", body="canary then rollback")
    serve_native(scope=["ENG"])
    search_knowledge_answer(seat, "canary", turn_id="run-1")
    event = Event.objects.get(name="knowledge_read")
    assert event.seat == seat and event.turn_id == "run-1"
    assert event.payload["via"] == "search_knowledge" and event.payload["served_mode"] == "hybrid"
    assert event.payload["pages"] == [{"page_id": str(p.pk), "title": "Deploy runbook", "container_key": "ENG"}]


def test_a_read_that_did_not_run_is_recorded_with_no_served_mode(seat, serve_native, db):
    serve_native(scope=[])
    search_knowledge_answer(seat, "canary")
    event = Event.objects.get(name="knowledge_read")
    assert event.payload["served_mode"] == "" and event.payload["unavailable"] == "scoped_to_nothing"


def test_a_failed_telemetry_write_never_fails_the_read(seat, serve_native, monkeypatch, db):
    from core import events

    def broken(*args, **kwargs):
        raise RuntimeError("event store down")

    monkeypatch.setattr(events, "publish", broken)
    save_page(container_key="ENG", title="Deploy runbook", body="canary")
    serve_native(scope=["ENG"])
    assert "Deploy runbook" in search_knowledge_answer(seat, "canary").text


def test_a_backend_that_raises_is_reported_unreachable(seat, serve_native, monkeypatch, db):
    serve_native(scope=["ENG"])
    monkeypatch.setattr(NativeSearcher, "search", lambda self, seat, q, limit: 1 / 0)
    answer = search_knowledge_answer(seat, "canary").text
    assert "could not be reached" in answer
