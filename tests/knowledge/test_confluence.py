"""The Confluence searcher against a local fake speaking the REST paths the library calls."""

from __future__ import annotations

import pytest

from knowledge.backends.confluence import api_url, build_cql, cql_string
from knowledge.searcher import SearchUnavailable, get_searcher, search
from tests.factories import SeatFactory
from tests.fakes.confluence_server import closed_port_url

DRAFTS = "Auto-Drafted Skills"


@pytest.fixture
def eng_and_ops(fake_confluence):
    """Two spaces, each with a published runbook and an Auto-Drafted Skills subtree holding a draft."""
    f = fake_confluence
    ids = {
        "eng_page": f.add_page("ENG", "Deploy runbook", "deploy with a canary then roll back on errors"),
        "ops_page": f.add_page("OPS", "Pager deploy notes", "deploy freeze during incidents"),
        "plat_page": f.add_page("PLAT", "Platform deploy guide", "deploy the platform"),
    }
    ids["eng_parent"] = f.add_page("ENG", DRAFTS, "drafts")
    ids["eng_draft"] = f.add_page("ENG", "[Auto-draft] Deploy procedure", "deploy draft", parent_id=ids["eng_parent"])
    ids["ops_parent"] = f.add_page("OPS", DRAFTS, "drafts")
    ids["ops_draft"] = f.add_page("OPS", "Deploy checklist (unreviewed)", "deploy steps", parent_id=ids["ops_parent"])
    return ids


def test_cql_is_text_narrowed_by_space_excluding_drafts_by_ancestor_and_title():
    cql = build_cql(query="deploy rollback", spaces=["ENG", "OPS"], excluded_ancestors=["42", "77"])
    assert cql == (
        'text ~ "deploy rollback" AND type IN (page, blogpost) AND space IN ("ENG","OPS") '
        'AND ancestor != 42 AND ancestor != 77 AND title !~ "\\"Auto-draft\\""'
    )


def test_quotes_and_backslashes_in_the_query_are_escaped():
    assert cql_string('say "hi" \\ bye') == '"say \\"hi\\" \\\\ bye"'
    cql = build_cql(query='the "blue" runbook', spaces=[], excluded_ancestors=[])
    assert cql.startswith('text ~ "the \\"blue\\" runbook" AND ')
    assert "space IN" not in cql


def test_search_sends_cql_scoped_to_the_readable_spaces_with_each_drafts_parent_excluded(
    seat, serve_confluence, fake_confluence, eng_and_ops
):
    serve_confluence(fake_confluence.url, scope=["ENG", "OPS"])
    result = search(seat, "deploy", 5)

    assert result.served_mode == "cql"
    (cql,) = fake_confluence.cqls
    assert 'space IN ("ENG","OPS")' in cql
    assert f"ancestor != {eng_and_ops['eng_parent']}" in cql
    assert f"ancestor != {eng_and_ops['ops_parent']}" in cql
    assert 'title !~ "\\"Auto-draft\\""' in cql
    assert sorted(p.title for p in result.pages) == ["Deploy runbook", "Pager deploy notes"]
    assert {p.container_key for p in result.pages} == {"ENG", "OPS"}
    hit = next(p for p in result.pages if p.title == "Deploy runbook")
    assert hit.page_id == eng_and_ops["eng_page"]
    assert hit.url == f"{fake_confluence.url}/spaces/ENG/pages/{eng_and_ops['eng_page']}"
    assert "canary" in hit.snippet


def test_parent_lookups_use_get_page_by_title_per_space_and_are_reused(
    seat, serve_confluence, fake_confluence, eng_and_ops
):
    serve_confluence(fake_confluence.url, scope=["ENG", "OPS"])
    search(seat, "deploy", 5)
    search(seat, "canary", 5)
    lookups = [r for r in fake_confluence.requests if r.path == "/rest/api/content"]
    assert [(r.params["spaceKey"], r.params["title"], r.params["type"]) for r in lookups] == [
        ("ENG", DRAFTS, "page"),
        ("OPS", DRAFTS, "page"),
    ]
    assert len(fake_confluence.cqls) == 2


def test_a_backend_that_ignores_the_exclusions_still_never_returns_a_draft(
    seat, serve_confluence, fake_confluence, eng_and_ops
):
    fake_confluence.ignored_clauses = {"ancestor", "title"}
    fake_confluence.add_page("ENG", "[Auto-draft] Loose deploy draft", "deploy, filed without a parent")
    serve_confluence(fake_confluence.url, scope=["ENG", "OPS"])

    result = search(seat, "deploy", 10)

    titles = {p.title for p in result.pages}
    assert titles == {"Deploy runbook", "Pager deploy notes"}


def test_title_clause_excludes_an_unparented_auto_draft_at_the_backend(
    seat, serve_confluence, fake_confluence, eng_and_ops
):
    fake_confluence.add_page("ENG", "[Auto-draft] Loose deploy draft", "deploy, filed without a parent")
    fake_confluence.ignored_clauses = {"ancestor"}
    serve_confluence(fake_confluence.url, scope=["ENG"])
    result = search(seat, "deploy", 10)
    assert [p.title for p in result.pages] == ["Deploy runbook"]


@pytest.mark.parametrize("url,cloud,expected", [
    ("https://acme.atlassian.net", "auto", "https://acme.atlassian.net/wiki"),  # a Cloud site: its API is under /wiki
    ("https://acme.atlassian.net/wiki/", "auto", "https://acme.atlassian.net/wiki"),
    ("https://acme.jira.com", "auto", "https://acme.jira.com/wiki"),
    ("https://confluence.acme.example", "auto", "https://confluence.acme.example"),  # Server / Data Center
    ("https://confluence.acme.example/confluence", False, "https://confluence.acme.example/confluence"),
    ("https://wiki.acme.example", True, "https://wiki.acme.example/wiki"),  # Cloud under a custom domain
    ("https://notatlassian.net", "auto", "https://notatlassian.net"),
])
def test_the_client_speaks_to_a_cloud_site_under_wiki(url, cloud, expected):
    assert api_url(url, cloud) == expected


def test_a_cloud_site_configured_without_wiki_is_searched_and_written_under_it(seat, serve_confluence, fake_confluence):
    from knowledge.promotion_writer import Draft, get_promotion_writer

    fake_confluence.prefix = "/wiki"  # as a Cloud site serves its REST API: nothing at the root
    fake_confluence.add_page("ENG", "Deploy runbook", "deploy with a canary")
    serve_confluence(fake_confluence.url, scope=["ENG"], cloud=True)  # the site's address, as a user copies it
    result = search(seat, "deploy", 3)
    assert [page.title for page in result.pages] == ["Deploy runbook"]
    draft = Draft(title="Rotate signing keys", summary="Rotate the signing keys before they expire.")
    outcome = get_promotion_writer().write_draft(container_key="ENG", draft=draft)
    assert outcome.page_id == fake_confluence.find("ENG", draft.draft_title).id
    assert fake_confluence.requests and not [r.path for r in fake_confluence.requests if r.path.startswith("(outside)")]


def test_search_runs_as_the_seats_own_credential(company, role, unit, serve_confluence, fake_confluence, monkeypatch):
    monkeypatch.setenv("ANA_CONFLUENCE_USER", "ana@acme.example")
    monkeypatch.setenv("ANA_CONFLUENCE_TOKEN", "ana-secret")
    ana = SeatFactory(
        company=company, role=role, unit=unit, handle="ana",
        mcp_env={"CONFLUENCE_USERNAME": "ANA_CONFLUENCE_USER", "CONFLUENCE_API_TOKEN": "ANA_CONFLUENCE_TOKEN"},
    )
    serve_confluence(fake_confluence.url, scope=["ENG"])
    search(ana, "deploy", 3)
    assert {r.auth for r in fake_confluence.requests} == {"ana@acme.example"}


def test_a_seat_without_credentials_falls_back_to_the_org_token(seat, serve_confluence, fake_confluence):
    serve_confluence(fake_confluence.url, scope=["ENG"], username="crewlet-bot")
    search(seat, "deploy", 3)
    assert {r.auth for r in fake_confluence.requests} == {"crewlet-bot"}


def test_an_org_token_without_a_username_is_sent_as_a_bearer_token(seat, serve_confluence, fake_confluence):
    serve_confluence(fake_confluence.url, scope=["ENG"], username="", org_token="pat-123")
    search(seat, "deploy", 3)
    assert {r.auth for r in fake_confluence.requests} == {"token:pat-123"}


def test_the_backend_answers_with_the_seats_own_permissions(
    company, role, unit, serve_confluence, fake_confluence, monkeypatch, eng_and_ops
):
    monkeypatch.setenv("BO_TOKEN", "bo-secret")
    bo = SeatFactory(company=company, role=role, unit=unit, handle="bo", mcp_env={
        "CONFLUENCE_USERNAME": "BO_USER", "CONFLUENCE_API_TOKEN": "BO_TOKEN"})
    monkeypatch.setenv("BO_USER", "bo@acme.example")
    fake_confluence.readable["bo@acme.example"] = {"OPS"}
    serve_confluence(fake_confluence.url, scope=["ENG", "OPS"])
    result = search(bo, "deploy", 5)
    assert [p.title for p in result.pages] == ["Pager deploy notes"]


def test_a_seat_with_its_own_credentials_and_no_scope_searches_unscoped(
    company, role, unit, serve_confluence, fake_confluence, monkeypatch, eng_and_ops
):
    monkeypatch.setenv("CY_TOKEN", "cy-secret")
    cy = SeatFactory(company=company, role=role, unit=unit, handle="cy", mcp_env={"CONFLUENCE_PERSONAL_TOKEN": "CY_TOKEN"})
    serve_confluence(fake_confluence.url, scope=[])

    result = search(cy, "deploy", 5)

    (cql,) = fake_confluence.cqls
    assert "space IN" not in cql and 'title !~ "\\"Auto-draft\\""' in cql
    assert sorted(p.title for p in result.pages) == ["Deploy runbook", "Pager deploy notes", "Platform deploy guide"]


def test_a_fallback_token_seat_with_no_scope_searches_nothing_and_sends_nothing(seat, serve_confluence, fake_confluence):
    serve_confluence(fake_confluence.url, scope=[])
    assert get_searcher().can_search(seat) is False
    result = search(seat, "deploy", 5)
    assert result.served_mode == "" and result.unavailable is SearchUnavailable.SCOPED_TO_NOTHING
    assert fake_confluence.requests == []


def test_can_search_does_no_io(seat, serve_confluence, fake_confluence, monkeypatch):
    serve_confluence(fake_confluence.url, scope=["ENG"])
    import requests

    def refuse(*args, **kwargs):
        raise AssertionError("can_search reached the network")

    monkeypatch.setattr(requests.Session, "request", refuse)
    assert get_searcher().can_search(seat) is True
    assert fake_confluence.requests == []


def test_no_url_or_no_credential_is_unconfigured(seat, serve_confluence):
    serve_confluence("", scope=["ENG"])
    assert get_searcher().unavailable(seat) is SearchUnavailable.UNCONFIGURED
    serve_confluence("http://127.0.0.1:9", scope=["ENG"], org_token="")
    assert get_searcher().unavailable(seat) is SearchUnavailable.UNCONFIGURED


def test_an_unreachable_backend_serves_no_mode(seat, serve_confluence):
    serve_confluence(closed_port_url(), scope=["ENG"])
    result = search(seat, "deploy", 5)
    assert result.served_mode == "" and result.ran is False
    assert result.unavailable is SearchUnavailable.UNREACHABLE
    assert result.pages == []


@pytest.mark.parametrize("mode", ["error", "drop"])
def test_a_failing_backend_serves_no_mode(seat, serve_confluence, fake_confluence, mode):
    fake_confluence.mode = mode
    serve_confluence(fake_confluence.url, scope=["ENG"])
    result = search(seat, "deploy", 5)
    assert result.served_mode == ""
    assert result.unavailable is SearchUnavailable.UNREACHABLE
    assert len(fake_confluence.requests) >= 1


def test_a_backend_slower_than_the_timeout_serves_no_mode(seat, serve_confluence, fake_confluence):
    fake_confluence.delay = 1.0
    serve_confluence(fake_confluence.url, scope=["ENG"], timeout=0.2)
    result = search(seat, "deploy", 5)
    assert result.served_mode == "" and result.detail == "timed out"


def test_a_search_that_ran_and_found_nothing_has_a_served_mode(seat, serve_confluence, fake_confluence):
    serve_confluence(fake_confluence.url, scope=["ENG"])
    result = search(seat, "nonexistent", 5)
    assert result.served_mode == "cql" and result.ran and result.pages == []
