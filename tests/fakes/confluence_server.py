"""A local fake Confluence speaking the v1 REST paths and payloads ``atlassian.Confluence`` uses.

Paths (those the library's server client calls): ``GET /rest/api/search?cql=&limit=&expand=&excerpt=``
(``Confluence.cql``), ``GET /rest/api/content?spaceKey=&title=&type=`` (``get_page_by_title``) and
``POST /rest/api/content`` (``create_page``). It records every request (method, path, query, JSON
body, who authenticated) and the CQL it received, evaluates the CQL clause forms our searcher
builds (an unknown clause is a 400, as Confluence answers a query it cannot parse), and can be made
to fail: ``mode = "error"`` answers 500 to everything, ``"drop"`` closes the connection unanswered,
``delay`` stalls each answer, ``refuse_parent`` answers 403 to creating an "Auto-Drafted Skills" page,
``ignored_clauses`` parses but does not apply clauses on those fields (to exercise the backstop);
``prefix = "/wiki"`` serves every path under ``/wiki`` alone, as a Confluence Cloud site does.
"""

from __future__ import annotations

import base64
import json
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

DRAFTS_PARENT = "Auto-Drafted Skills"
_WORD = re.compile(r"\w+")


class CqlError(ValueError):
    pass


@dataclass
class Recorded:
    method: str
    path: str
    params: dict
    body: dict | None
    auth: str


@dataclass
class FakePage:
    id: str
    space: str
    title: str
    body: str = ""
    type: str = "page"
    ancestors: list[str] = field(default_factory=list)  # ids, root first


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _split_and(cql: str) -> list[str]:
    """Split on top-level AND, outside string literals and parentheses."""
    parts, buf, depth, in_str, i = [], [], 0, False, 0
    while i < len(cql):
        ch = cql[i]
        if in_str:
            buf.append(ch)
            if ch == "\\" and i + 1 < len(cql):
                buf.append(cql[i + 1])
                i += 1
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
            buf.append(ch)
        elif ch in "()":
            depth += 1 if ch == "(" else -1
            buf.append(ch)
        elif depth == 0 and cql[i : i + 5].upper() == " AND ":
            parts.append("".join(buf).strip())
            buf, i = [], i + 5
            continue
        else:
            buf.append(ch)
        i += 1
    if in_str or depth:
        raise CqlError("unbalanced quotes or parentheses")
    parts.append("".join(buf).strip())
    return parts


_STRING = r'"((?:[^"\\]|\\.)*)"'


def _unescape(literal: str) -> str:
    return re.sub(r"\\(.)", r"\1", literal)


def _values(inner: str) -> list[str]:
    out = []
    for item in inner.split(","):
        item = item.strip()
        m = re.fullmatch(_STRING, item)
        out.append(_unescape(m.group(1)) if m else item)
    return out


def _contains_phrase(haystack: str, phrase: str) -> bool:
    words, target = _words(haystack), _words(phrase)
    return bool(target) and any(words[i : i + len(target)] == target for i in range(len(words)))


def compile_clause(clause: str):
    """One clause of the forms our searcher sends, as (its field, a predicate over a page)."""
    if m := re.fullmatch(rf"text ~ {_STRING}", clause):
        terms = _words(_unescape(m.group(1)))
        return "text", lambda p: any(t in _words(f"{p.title} {p.body}") for t in terms)
    if m := re.fullmatch(r"type IN \(([^)]*)\)", clause, re.I):
        types = _values(m.group(1))
        return "type", lambda p: p.type in types
    if m := re.fullmatch(r"space IN \(([^)]*)\)", clause, re.I):
        spaces = _values(m.group(1))
        return "space", lambda p: p.space in spaces
    if m := re.fullmatch(r"parent = (\d+)", clause):
        pid = m.group(1)
        return "parent", lambda p: bool(p.ancestors) and p.ancestors[-1] == pid
    if m := re.fullmatch(r"ancestor != (\d+)", clause):
        pid = m.group(1)
        return "ancestor", lambda p: pid not in p.ancestors
    if m := re.fullmatch(rf"title !~ {_STRING}", clause):
        phrase = _unescape(m.group(1)).strip('"')
        return "title", lambda p: not _contains_phrase(p.title, phrase)
    raise CqlError(f"could not parse clause {clause!r}")


class FakeConfluence:
    def __init__(self):
        self.pages: dict[str, FakePage] = {}
        self.requests: list[Recorded] = []
        self.mode = "ok"  # ok | error | drop
        self.delay = 0.0
        self.prefix = ""  # "/wiki": served as a Cloud site serves it, under that path only (elsewhere a 404)
        self.refuse_parent = False
        self.readable: dict[str, set[str]] = {}  # auth -> spaces it may read; absent = every space
        self.ignored_clauses: set[str] = set()  # clause fields parsed but not applied (a lagging index)
        self._next_id = 1000
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # ---- lifecycle -------------------------------------------------------------------------
    def start(self) -> FakeConfluence:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # ---- store -----------------------------------------------------------------------------
    def add_page(self, space: str, title: str, body: str = "", *, parent_id: str | None = None, type: str = "page") -> str:
        with self._lock:
            page_id = str(self._next_id)
            self._next_id += 1
            ancestors = (self.pages[parent_id].ancestors + [parent_id]) if parent_id else []
            self.pages[page_id] = FakePage(page_id, space, title, body, type, ancestors)
        return page_id

    def find(self, space: str, title: str) -> FakePage | None:
        return next((p for p in self.pages.values() if p.space == space and p.title == title), None)

    @property
    def cqls(self) -> list[str]:
        return [r.params.get("cql", "") for r in self.requests if r.path == "/rest/api/search"]

    def posts(self) -> list[Recorded]:
        return [r for r in self.requests if r.method == "POST"]

    # ---- wire shapes -----------------------------------------------------------------------
    def content_json(self, page: FakePage, expand: str = "") -> dict:
        out = {
            "id": page.id,
            "type": page.type,
            "status": "current",
            "title": page.title,
            "_links": {"webui": f"/spaces/{page.space}/pages/{page.id}", "self": f"{self.url}/rest/api/content/{page.id}"},
        }
        if "space" in expand:
            out["space"] = {"key": page.space, "name": page.space, "type": "global"}
        if "body.storage" in expand:
            out["body"] = {"storage": {"value": page.body, "representation": "storage"}}
        if "ancestors" in expand:
            out["ancestors"] = [{"id": a, "type": "page", "title": self.pages[a].title} for a in page.ancestors]
        return out

    def search(self, cql: str, limit: int, expand: str, auth: str) -> dict:
        clauses = [compile_clause(c) for c in _split_and(cql)]
        predicates = [pred for kind, pred in clauses if kind not in self.ignored_clauses]
        readable = self.readable.get(auth)
        found = [
            p
            for p in self.pages.values()
            if all(pred(p) for pred in predicates) and (readable is None or p.space in readable)
        ][:limit]
        content_expand = ",".join(e.split(".", 1)[1] for e in expand.split(",") if e.startswith("content."))
        return {
            "results": [
                {
                    "content": self.content_json(p, content_expand),
                    "title": p.title,
                    "excerpt": " ".join(p.body.split())[:120],
                    "url": f"/spaces/{p.space}/pages/{p.id}",
                    "resultGlobalContainer": {"title": p.space, "displayUrl": f"/spaces/{p.space}"},
                    "entityType": "content",
                    "lastModified": "2026-01-01T00:00:00.000Z",
                }
                for p in found
            ],
            "start": 0,
            "limit": limit,
            "size": len(found),
            "totalSize": len(found),
            "cqlQuery": cql,
            "searchDuration": 1,
            "_links": {"base": self.url, "context": ""},
        }

    def create(self, body: dict) -> tuple[int, dict]:
        storage = ((body.get("body") or {}).get("storage") or {})
        space = (body.get("space") or {}).get("key")
        if body.get("type") not in ("page", "blogpost") or not body.get("title") or not space:
            return 400, {"statusCode": 400, "message": "type, title and space.key are required"}
        if storage.get("representation") != "storage" or "value" not in storage:
            return 400, {"statusCode": 400, "message": "body.storage with representation storage is required"}
        if self.refuse_parent and body["title"] == DRAFTS_PARENT:
            return 403, {"statusCode": 403, "message": "Not permitted to add content to this space"}
        if self.find(space, body["title"]):
            return 400, {"statusCode": 400, "message": "A page with this title already exists in this space"}
        ancestors = body.get("ancestors") or []
        parent_id = str(ancestors[-1]["id"]) if ancestors else None
        if parent_id and parent_id not in self.pages:
            return 404, {"statusCode": 404, "message": f"No parent with id {parent_id}"}
        page_id = self.add_page(space, body["title"], storage["value"], parent_id=parent_id, type=body["type"])
        out = self.content_json(self.pages[page_id], "space,ancestors")
        out["_links"]["base"] = self.url
        return 200, out


def _auth_of(header: str) -> str:
    if header.startswith("Basic "):
        user = base64.b64decode(header[6:]).decode().split(":", 1)[0]
        return user
    if header.startswith("Bearer "):
        return "token:" + header[7:]
    return ""


def _handler_for(fake: FakeConfluence):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _record(self, body):
            parts = urlsplit(self.path)
            params = {k: v[0] for k, v in parse_qs(parts.query).items()}
            path = parts.path.rstrip("/")
            if fake.prefix:  # a route is its path under the prefix; a path outside it matches none
                path = path[len(fake.prefix):] if path.startswith(fake.prefix + "/") else "(outside)" + path
            rec = Recorded(self.command, path, params, body, _auth_of(self.headers.get("Authorization", "")))
            with fake._lock:
                fake.requests.append(rec)
            return rec

        def _answer(self, status: int, payload: dict):
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _failing(self) -> bool:
            if fake.delay:
                time.sleep(fake.delay)
            if fake.mode == "drop":
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return True
            if fake.mode == "error":
                self._answer(500, {"statusCode": 500, "message": "Internal server error"})
                return True
            return False

        def do_GET(self):
            rec = self._record(None)
            if self._failing():
                return
            if rec.path == "/rest/api/search":
                try:
                    answer = fake.search(rec.params.get("cql", ""), int(rec.params.get("limit", 25)), rec.params.get("expand", ""), rec.auth)
                except CqlError as exc:
                    return self._answer(400, {"statusCode": 400, "message": f"Could not parse cql : {exc}"})
                return self._answer(200, answer)
            if rec.path == "/rest/api/content":
                page = fake.find(rec.params.get("spaceKey", ""), rec.params.get("title", ""))
                wanted = rec.params.get("type", "page")
                results = [fake.content_json(page, rec.params.get("expand", ""))] if page and page.type == wanted else []
                return self._answer(200, {"results": results, "start": 0, "limit": 25, "size": len(results), "_links": {"base": fake.url}})
            self._answer(404, {"statusCode": 404, "message": f"no route {rec.path}"})

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = None
            rec = self._record(body)
            if self._failing():
                return
            if rec.path != "/rest/api/content" or not isinstance(body, dict):
                return self._answer(404 if rec.path != "/rest/api/content" else 400, {"statusCode": 400, "message": "bad request"})
            status, payload = fake.create(body)
            self._answer(status, payload)

    return Handler


def closed_port_url() -> str:
    """A URL nothing listens on: connecting to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
