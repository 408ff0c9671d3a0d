"""## Relevant knowledge over the Searcher seam, against the native knowledge backend (and a fake
Confluence that does not answer, for a search that did not run)."""

from core.models import Event
from core.providers.errors import TransientError
from core.providers.llm.scripted import ScriptedProvider
from crewlet.config import schema
from knowledge.pages import save_page
from learning.prefetch.hints import EmptyKnowledgeHint, UnsearchedKnowledgeHint
from learning.purposes import knowledge_query
from tests.fakes.confluence_server import closed_port_url

from .conftest import aux_spend, block

ASK = "How do we rotate the payment signing key?"


def test_pages_render_as_title_and_snippet_and_are_counted(seat, run, serve_native):
    page = save_page(container_key="ENG", title="Key rotation runbook", body="steps to rotate the payment signing key")
    save_page(container_key="ENG", title="[Auto-draft] rotate keys", body="unreviewed steps to rotate the signing key")
    serve_native(scope=["ENG"])
    result = run(ask=ASK)
    text = block(result, "relevant_knowledge")["text"]
    assert "- Key rotation runbook — " in text and f"(ENG page {page.pk})" in text
    assert "Auto-draft" not in text  # an unvetted draft never reaches an agent
    assert result["summary"]["relevant_knowledge_selection_count"] == 1
    read = Event.objects.get(name="knowledge_read")
    assert read.turn_id == result["run_id"] and read.payload["via"] == "relevant_knowledge"
    assert read.payload["query"] == "rotate payment signing key"  # the offline knowledge_query heuristic's
    assert [p["page_id"] for p in read.payload["pages"]] == [str(page.pk)]


def test_the_query_prompt_ends_with_the_knowledge_base_search_query_line(seat, role, run, serve_native):
    role.llm_auxiliary = ["scripted"]
    role.save()
    serve_native(scope=["ENG"])
    run(ask=ASK)
    call = next(c for c in ScriptedProvider.calls if c["purpose"] == "knowledge_query")
    assert call["messages"][-1]["content"].endswith("Knowledge-base search query:")
    assert ASK in call["messages"][-1]["content"]


def test_nothing_found_and_not_searched_are_different_sentences(seat, run, serve_native, serve_confluence):
    serve_native(scope=["ENG"])
    assert block(run(ask=ASK), "relevant_knowledge")["text"].endswith(EmptyKnowledgeHint)
    serve_confluence(closed_port_url(), scope=["ENG"])
    assert block(run(ask=ASK), "relevant_knowledge")["text"].endswith(UnsearchedKnowledgeHint)
    unsearched = Event.objects.filter(name="knowledge_read").order_by("-id").first()
    assert unsearched.payload["served_mode"] == "" and unsearched.payload["unavailable"] == "unreachable"


def test_cannot_search_skips_the_query_generation_entirely(seat, run, serve_native):
    serve_native(scope=[])
    result = run(ask=ASK)
    assert block(result, "relevant_knowledge")["text"] == ""
    assert aux_spend(result["run_id"], "knowledge_query") == 0


def test_a_failed_query_generation_searches_with_the_offline_query_and_says_so(seat, role, run, serve_native):
    role.llm_auxiliary = ["scripted"]
    role.save()
    serve_native(scope=["ENG"])
    ScriptedProvider.queue("knowledge_query", TransientError("429"))
    result = run(ask=ASK)
    assert result["summary"]["model_fallbacks"] == {"knowledge_query": "transient"}
    read = Event.objects.get(name="knowledge_read").payload
    assert read["query"] == knowledge_query.PURPOSE.offline(knowledge_query.Inputs(ask=ASK))


def test_no_backend_configured_renders_nothing(seat, run, serve_config):
    serve_config(knowledge=schema.Knowledge(backend="none"))
    result = run(ask=ASK)
    assert block(result, "relevant_knowledge")["text"] == ""
    assert aux_spend(result["run_id"], "knowledge_query") == 0


def test_a_query_answered_with_thinking_and_a_preamble_searches_the_query_alone(seat, role, run, serve_native):
    role.llm_auxiliary = ["scripted"]
    role.save()
    serve_native(scope=["ENG"])
    ScriptedProvider.queue("knowledge_query", "<think>They ask about {keys}.</think>\nHere is the query: payment key rotation")
    run(ask=ASK)
    assert Event.objects.get(name="knowledge_read").payload["query"] == "payment key rotation"


def test_a_noop_query_searches_nothing_and_shows_nothing(seat, role, run, serve_native):
    role.llm_auxiliary = ["scripted"]
    role.save()
    serve_native(scope=["ENG"])
    ScriptedProvider.queue("knowledge_query", "NOOP")
    assert block(run(ask=ASK), "relevant_knowledge")["text"] == ""
    assert not Event.objects.filter(name="knowledge_read").exists()
