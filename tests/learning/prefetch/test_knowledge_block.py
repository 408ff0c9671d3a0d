"""## Relevant knowledge over the Searcher seam (a fake searcher stands in for knowledge.searcher)."""

import sys

from core.models import Event
from core.providers.errors import TransientError
from core.providers.llm.scripted import ScriptedProvider
from learning.prefetch import knowledge_seam
from learning.prefetch.hints import EmptyKnowledgeHint, UnsearchedKnowledgeHint
from tests.learning.memory_rows import FakePage, FakeResult, FakeSearcher, install_searcher

from .conftest import aux_spend, block

ASK = "How do we rotate the payment signing key?"


def test_pages_render_as_title_and_snippet_and_are_counted(seat, run, monkeypatch):
    pages = [FakePage("Key rotation runbook", "steps to rotate signing keys", "11", "ENG", "https://kb/11"),
             FakePage("[Auto-draft] rotate keys", "unreviewed", "12")]
    searcher = install_searcher(monkeypatch, FakeSearcher(result=FakeResult(pages=pages)))
    result = run(ask=ASK)
    text = block(result, "relevant_knowledge")["text"]
    assert "- Key rotation runbook — steps to rotate signing keys (https://kb/11)" in text
    assert "Auto-draft" not in text  # the backstop: an unvetted draft never reaches an agent
    assert searcher.searches == [("rotate payment signing key", 5)]
    assert result["summary"]["relevant_knowledge_selection_count"] == 1
    read = Event.objects.get(name="knowledge_read")
    assert [p["page_id"] for p in read.payload["pages"]] == ["11"]


def test_the_query_prompt_ends_with_the_knowledge_base_search_query_line(seat, role, run, monkeypatch):
    role.llm_auxiliary = ["scripted"]
    role.save()
    install_searcher(monkeypatch, FakeSearcher())
    run(ask=ASK)
    call = next(c for c in ScriptedProvider.calls if c["purpose"] == "knowledge_query")
    assert call["messages"][-1]["content"].endswith("Knowledge-base search query:")
    assert ASK in call["messages"][-1]["content"]


def test_nothing_found_and_not_searched_are_different_sentences(seat, run, monkeypatch):
    install_searcher(monkeypatch, FakeSearcher(result=FakeResult(pages=[], served_mode="native")))
    assert block(run(ask=ASK), "relevant_knowledge")["text"].endswith(EmptyKnowledgeHint)
    install_searcher(monkeypatch, FakeSearcher(result=FakeResult(pages=[], served_mode="")))
    assert block(run(ask=ASK), "relevant_knowledge")["text"].endswith(UnsearchedKnowledgeHint)


def test_a_searcher_that_raises_reads_as_not_searched(seat, run, monkeypatch):
    install_searcher(monkeypatch, FakeSearcher())

    def boom(seat, query, limit):
        raise ConnectionError("refused")

    monkeypatch.setattr(sys.modules["knowledge.searcher"], "search", boom)
    assert block(run(ask=ASK), "relevant_knowledge")["text"].endswith(UnsearchedKnowledgeHint)


def test_cannot_search_skips_the_query_generation_entirely(seat, run, monkeypatch):
    install_searcher(monkeypatch, FakeSearcher(can=False))
    result = run(ask=ASK)
    assert block(result, "relevant_knowledge")["text"] == ""
    assert aux_spend(result["run_id"], "knowledge_query") == 0


def test_a_failed_query_generation_shows_nothing(seat, role, run, monkeypatch):
    role.llm_auxiliary = ["scripted"]
    role.save()
    searcher = install_searcher(monkeypatch, FakeSearcher())
    ScriptedProvider.queue("knowledge_query", TransientError("429"))
    assert block(run(ask=ASK), "relevant_knowledge")["text"] == ""
    assert searcher.searches == []


def test_no_searcher_module_means_no_searcher_wired(seat, run, monkeypatch):
    monkeypatch.setitem(sys.modules, "knowledge.searcher", None)  # import fails as if the module were absent
    assert knowledge_seam.searcher() is None and knowledge_seam.can_search(seat) is False
    assert knowledge_seam.search_knowledge_answer(seat, "x") == knowledge_seam.NO_SEARCHER_ANSWER
    assert block(run(ask=ASK), "relevant_knowledge")["text"] == ""
