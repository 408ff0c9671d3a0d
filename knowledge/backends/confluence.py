"""The Confluence backend through ``atlassian-python-api``: CQL search as the seat, drafts as the org.

The search runs as the seat's own credential (named in its ``mcp_env``), falling back to the org
token, so Confluence's own page permissions decide what it sees. Its CQL is::

    text ~ "<query>" AND type IN (page, blogpost) AND space IN ("ENG","OPS")
      AND ancestor != <Auto-Drafted Skills id of ENG> AND ancestor != <... of OPS>
      AND title !~ "\\"Auto-draft\\""

The last clause and a filter over the results (a title with the ``[Auto-draft]`` prefix, or an
ancestor titled Auto-Drafted Skills) are the fail-closed backstop. We speak the v1 REST API
(``rest/api/search``, ``rest/api/content``) that Server/Data Center and Cloud (under ``/wiki``, which
``api_url`` adds to a Cloud site's url) both serve, through the library's server client: its legacy Cloud
client has no ``create_page``.
"""

from __future__ import annotations

import logging
import math
import os
import re
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import requests
from atlassian import Confluence
from atlassian.errors import ApiError

from crewlet import config
from knowledge.models import AUTO_DRAFT_PREFIX, AUTO_DRAFTED_PARENT
from knowledge.pages import is_auto_draft_title
from knowledge.promotion_writer import (
    Draft,
    DraftRefused,
    WriteFailed,
    WriteOutcome,
    drafts_parent_storage,
    render_storage,
)
from knowledge.searcher import PageHit, SearchResult, SearchUnavailable, accessible_containers
from knowledge.tool_skill_pages import RegistryPage, storage_text

if TYPE_CHECKING:
    from crewlet.models import Seat

log = logging.getLogger("knowledge.confluence")

SEAT_USERNAME_KEY = "CONFLUENCE_USERNAME"
SEAT_TOKEN_KEYS = ("CONFLUENCE_API_TOKEN", "CONFLUENCE_PERSONAL_TOKEN")
CONTENT_TYPES = ("page", "blogpost")
SEARCH_EXPAND = "content.space,content.ancestors"
REGISTRY_PAGES = 100  # tool skills under the registry's parent read at most
OVERFETCH = 2  # ask for this many times the limit, so results the backstop drops do not starve it
PARENT_ID_TTL_SECONDS = 600  # a found Auto-Drafted Skills id is reused this long; "none found" never is
AUTO_DRAFT_PHRASE = AUTO_DRAFT_PREFIX.strip("[]")  # brackets are Lucene range syntax inside text ~
UNREACHABLE_ERRORS = (requests.RequestException, ApiError)
_HIGHLIGHT = re.compile(r"@@@(end)?hl@@@")


@dataclass(frozen=True)
class Credential:
    username: str
    token: str
    own: bool  # the seat's own, which may search unscoped


def _env(name: str | None) -> str:
    return os.environ.get(name, "") if name else ""


def seat_credential(seat: Seat) -> Credential | None:
    """The seat's own credential: ``mcp_env`` maps CONFLUENCE_* names to env vars holding them."""
    names = getattr(seat, "mcp_env", None) or {}
    token = next((_env(names.get(key)) for key in SEAT_TOKEN_KEYS if _env(names.get(key))), "")
    if not token:
        return None
    return Credential(username=_env(names.get(SEAT_USERNAME_KEY)), token=token, own=True)


def org_credential() -> Credential | None:
    spec = config.current().knowledge.confluence
    token = _env(spec.token_env)
    return Credential(username=spec.username, token=token, own=False) if token else None


CLOUD_HOSTS = ("atlassian.net", "jira.com")  # Atlassian Cloud sites' domains (``cloud = "auto"``)
CLOUD_PATH = "/wiki"  # where a Cloud site serves Confluence and its REST API


def api_url(url: str, cloud: bool | str) -> str:
    """The base URL the client speaks to: a Cloud site's ``url`` with ``/wiki`` (added when missing -- a Cloud
    site serves Confluence's REST API under ``/wiki``, not at its root), anything else as given."""
    url = url.rstrip("/")
    if cloud == "auto":
        host = (urlsplit(url).hostname or "").lower()
        cloud = any(host == domain or host.endswith("." + domain) for domain in CLOUD_HOSTS)
    if cloud and not urlsplit(url).path.rstrip("/").endswith(CLOUD_PATH):
        return url + CLOUD_PATH
    return url


def make_client(credential: Credential) -> Confluence:
    spec = config.current().knowledge.confluence
    auth = (
        {"username": credential.username, "password": credential.token}
        if credential.username
        else {"token": credential.token}
    )
    client = Confluence(url=api_url(spec.url, spec.cloud), cloud=False, timeout=max(1, math.ceil(spec.timeout_seconds)),
                        retry_with_header=False, **auth)
    # the library stores its timeout as whole seconds; a sub-second budget is set on the client itself
    getattr(client, "_impl", client).timeout = spec.timeout_seconds
    return client


def cql_string(value: str) -> str:
    """A CQL string literal: backslashes and double quotes escaped."""
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def cql_id(value) -> str:
    text = str(value)
    return text if text.isdigit() else cql_string(text)


def build_cql(*, query: str, spaces: list[str], excluded_ancestors: list[str]) -> str:
    clauses = [f"text ~ {cql_string(query)}", f"type IN ({', '.join(CONTENT_TYPES)})"]
    if spaces:
        clauses.append(f"space IN ({','.join(cql_string(s) for s in spaces)})")
    clauses += [f"ancestor != {cql_id(pid)}" for pid in excluded_ancestors]
    clauses.append(f"title !~ {cql_string(chr(34) + AUTO_DRAFT_PHRASE + chr(34))}")
    return " AND ".join(clauses)


def describe(exc: Exception) -> str:
    response = getattr(exc, "response", None)
    if response is not None:
        return f"HTTP {response.status_code}"
    if isinstance(exc, requests.Timeout):
        return "timed out"
    if isinstance(exc, requests.ConnectionError):
        return "connection failed"
    return type(exc).__name__


def first_id(answer) -> str | None:
    results = answer.get("results") if isinstance(answer, dict) else None
    return str(results[0]["id"]) if results else None


def is_hidden(content: dict, excluded: set[str]) -> bool:
    """The backstop: a draft title, the parent itself, or anything beneath an Auto-Drafted Skills page."""
    title = content.get("title") or ""
    if is_auto_draft_title(title) or title == AUTO_DRAFTED_PARENT or str(content.get("id")) in excluded:
        return True
    return any(
        a.get("title") == AUTO_DRAFTED_PARENT or str(a.get("id")) in excluded for a in content.get("ancestors") or []
    )


def parse_results(answer: dict, excluded: set[str]) -> list[PageHit]:
    base = (answer.get("_links") or {}).get("base", "")
    hits = []
    for row in answer.get("results") or []:
        content = row.get("content") or {}
        if not content.get("id") or is_hidden(content, excluded):
            continue
        link = (content.get("_links") or {}).get("webui") or row.get("url") or ""
        hits.append(
            PageHit(
                title=content.get("title") or row.get("title") or "",
                snippet=" ".join(_HIGHLIGHT.sub("", row.get("excerpt") or "").split()),
                page_id=str(content["id"]),
                container_key=(content.get("space") or {}).get("key", ""),
                url=f"{base}{link}" if link else "",
            )
        )
    return hits


class ConfluenceSearcher:
    def __init__(self):
        self._parent_ids: dict[tuple[str, str], tuple[str, float]] = {}
        self._lock = threading.Lock()

    def unavailable(self, seat: Seat) -> SearchUnavailable | None:
        if not config.current().knowledge.confluence.url:
            return SearchUnavailable.UNCONFIGURED
        if seat_credential(seat) is not None:
            return None
        if org_credential() is None:
            return SearchUnavailable.UNCONFIGURED
        return None if accessible_containers(seat) else SearchUnavailable.SCOPED_TO_NOTHING

    def can_search(self, seat: Seat) -> bool:
        return self.unavailable(seat) is None

    def search(self, seat: Seat, query: str, limit: int) -> SearchResult:
        reason = self.unavailable(seat)
        if reason is not None:
            return SearchResult.not_run(reason)
        credential = seat_credential(seat) or org_credential()
        if credential is None:  # unavailable() said there is one; config may have changed since
            return SearchResult.not_run(SearchUnavailable.UNCONFIGURED)
        client = make_client(credential)
        spaces = accessible_containers(seat)
        try:
            excluded = [pid for pid in (self.drafts_parent_id(client, s) for s in spaces) if pid]
            cql = build_cql(query=query, spaces=spaces, excluded_ancestors=excluded)
            answer = client.cql(cql, limit=limit * OVERFETCH, expand=SEARCH_EXPAND, excerpt="indexed")
        except UNREACHABLE_ERRORS as exc:
            log.warning("Confluence search did not run for %s: %s", getattr(seat, "handle", seat), describe(exc))
            return SearchResult.not_run(SearchUnavailable.UNREACHABLE, describe(exc))
        if not isinstance(answer, dict):
            return SearchResult.not_run(SearchUnavailable.UNREACHABLE, "the answer was not a search result")
        return SearchResult(pages=parse_results(answer, set(excluded))[:limit], served_mode="cql")

    def tool_skill_pages(self, *, container_key: str, parent: str) -> list[RegistryPage]:
        """The children of the registry's parent page in one space, read as the org (raises when unreachable)."""
        credential = org_credential()
        if credential is None:
            return []
        client = make_client(credential)
        parent_id = first_id(client.get_page_by_title(container_key, parent))
        if parent_id is None:
            return []
        answer = client.cql(f"parent = {cql_id(parent_id)} AND type IN (page)", limit=REGISTRY_PAGES,
                            expand="content.body.storage")
        pages = []
        for row in (answer or {}).get("results") or []:
            content = row.get("content") or {}
            storage = ((content.get("body") or {}).get("storage") or {}).get("value", "")
            pages.append(RegistryPage(str(content.get("id")), container_key, content.get("title") or "",
                                      storage_text(storage)))
        return pages

    def drafts_parent_id(self, client: Confluence, space: str) -> str | None:
        """The space's Auto-Drafted Skills page id (a found id is cached; a missing one is asked again)."""
        key = (config.current().knowledge.confluence.url, space)
        with self._lock:
            cached = self._parent_ids.get(key)
        if cached and time.monotonic() - cached[1] < PARENT_ID_TTL_SECONDS:
            return cached[0]
        try:
            page_id = first_id(client.get_page_by_title(space, AUTO_DRAFTED_PARENT))
        except requests.HTTPError as exc:
            if exc.response is not None and exc.response.status_code == 404:
                return None
            raise
        if page_id:
            with self._lock:
                self._parent_ids[key] = (page_id, time.monotonic())
        return page_id


class ConfluencePromotionWriter:
    """Drafts as pages under the space's Auto-Drafted Skills parent, posted as storage XHTML."""

    def _client(self) -> Confluence:
        credential = org_credential()
        if not config.current().knowledge.confluence.url or credential is None:
            raise WriteFailed("no Confluence url or org token: set knowledge.confluence.url and token_env")
        return make_client(credential)

    def _lookup(self, client, space: str, title: str) -> WriteOutcome | None:
        page_id = first_id(client.get_page_by_title(space, title))
        return WriteOutcome(page_id=page_id, page_title=title, container_key=space, existed=True) if page_id else None

    def existing(self, *, container_key: str, title: str) -> WriteOutcome | None:
        client = self._client()
        try:
            for candidate in (f"{AUTO_DRAFT_PREFIX} {title}", title):
                found = self._lookup(client, container_key, candidate)
                if found is not None:
                    return found
        except UNREACHABLE_ERRORS as exc:
            raise WriteFailed(f"Confluence could not be asked for {title!r}: {describe(exc)}") from exc
        return None

    def ensure_parent(self, client, space: str) -> str:
        try:
            page_id = first_id(client.get_page_by_title(space, AUTO_DRAFTED_PARENT))
            if page_id is None:
                created = client.create_page(space, AUTO_DRAFTED_PARENT, drafts_parent_storage(), representation="storage")
                page_id = str(created["id"]) if isinstance(created, dict) and created.get("id") else None
        except UNREACHABLE_ERRORS as exc:
            raise DraftRefused(
                f"the {AUTO_DRAFTED_PARENT!r} parent could not be created in space {space} ({describe(exc)}); "
                "the draft is not filed at the space root"
            ) from exc
        if page_id is None:
            raise DraftRefused(f"Confluence did not return an id for the {AUTO_DRAFTED_PARENT!r} parent in {space}")
        return page_id

    def write_draft(self, *, container_key: str, draft: Draft) -> WriteOutcome:
        found = self.existing(container_key=container_key, title=draft.title)
        if found is not None:
            return found
        client = self._client()
        parent_id = self.ensure_parent(client, container_key)
        try:
            created = client.create_page(
                container_key, draft.draft_title, render_storage(draft), parent_id=parent_id, representation="storage"
            )
        except UNREACHABLE_ERRORS as exc:
            found = self.existing(container_key=container_key, title=draft.title)  # a racing tick filed it
            if found is not None:
                return found
            raise WriteFailed(f"draft {draft.draft_title!r} was not created: {describe(exc)}") from exc
        if not isinstance(created, dict) or not created.get("id"):
            raise WriteFailed(f"Confluence did not return an id for draft {draft.draft_title!r}")
        base = (created.get("_links") or {}).get("base", "")
        webui = (created.get("_links") or {}).get("webui", "")
        return WriteOutcome(
            page_id=str(created["id"]),
            page_title=draft.draft_title,
            container_key=container_key,
            existed=False,
            url=f"{base}{webui}" if webui else "",
        )
