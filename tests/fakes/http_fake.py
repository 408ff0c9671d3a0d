"""A small JSON HTTP server on 127.0.0.1 (random port) in a thread, for the fakes of external APIs.

A fake records every request it receives and answers from a plan: queue ``answer(...)``,
``fail(status)`` or ``stall(seconds)``; ``delay`` (seconds) makes every request a slow one, and ``hold(after=n)`` keeps every request past
the first ``n`` waiting until ``release()``; with the plan empty it answers its default (or what its
``responder(body)`` says). A ``mode`` (one of ``MODES``) makes every request behave like a kind
of real server; ``rejects`` names request parameters answered 400 as unsupported. Subclasses
name their routes and shape the bodies of the API they stand for.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

POLL_SECONDS = 0.02  # how soon close() is noticed by the serving loop


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass(frozen=True)
class Answer:
    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Failure:
    status: int
    message: str = ""


@dataclass(frozen=True)
class Stall:
    seconds: float


MODES = {
    "": "answers every request in full",
    "rejects_response_format": "answers 400 to a request asking for JSON mode (LM Studio and others)",
    "rejects_max_tokens": "answers 400 to max_tokens and wants max_completion_tokens (OpenAI's reasoning models)",
    "length": "cuts every answer off at its token budget (finish_reason length / stop_reason max_tokens)",
    "reasoning_only": "spends the answer on reasoning and returns no content (a reasoning model's small budget)",
    "rate_limited_once": "answers the first request 429, then every request in full",
}


class FakeServer:
    routes: dict[tuple[str, str], str] = {}  # (method, path) -> handler method name
    default_text = "ok"

    def __init__(self, *, mode: str = "", responder=None):
        if mode not in MODES:
            raise ValueError(f"unknown fake server mode {mode!r} (one of {', '.join(m for m in MODES if m)})")
        self.mode, self.responder = mode, responder
        self.rejects: set[str] = {"response_format"} if mode == "rejects_response_format" else set()
        if mode == "rejects_max_tokens":
            self.rejects.add("max_tokens")
        self.requests: list[Recorded] = []
        self.api_key: str | None = None  # when set, any other key is answered 401
        self.models: set[str] | None = None  # when set, any other model is answered 404
        self.delay = 0.0  # seconds every request takes before it is answered (a slow provider)
        self._held_after: int | None = None
        self._held = threading.Event()
        self._plan: deque = deque([Failure(429, "rate limited")] if mode == "rate_limited_once" else [])
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.fake = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": POLL_SECONDS}, name=type(self).__name__, daemon=True
        )

    # lifecycle
    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self._release.set()
        self._held.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    # the plan
    def answer(self, text: str, *, input_tokens: int | None = None, output_tokens: int | None = None, **extra):
        self._queue(Answer(text, input_tokens, output_tokens, extra))

    def fail(self, status: int, *, times: int = 1, message: str = ""):
        for _ in range(times):
            self._queue(Failure(status, message))

    def stall(self, seconds: float):
        self._queue(Stall(seconds))

    def hold(self, *, after: int) -> None:
        """Answer the first ``after`` requests; keep every later one waiting until ``release()``."""
        self._held_after = after
        self._held.clear()

    def release(self) -> None:
        self._held.set()

    def _queue(self, step) -> None:
        with self._lock:
            self._plan.append(step)

    def _next(self, body):
        with self._lock:
            if self._plan:
                return self._plan.popleft()
        text = self.responder(body) if self.responder else self.default_text
        return Answer(text)

    # serving
    def serve(self, request: Recorded) -> tuple[int, dict, dict]:
        with self._lock:
            self.requests.append(request)
            held = self._held_after is not None and len(self.requests) > self._held_after
        if held:
            while not (self._held.wait(POLL_SECONDS) or self._release.is_set()):
                pass
        handler = self.routes.get((request.method, request.path))
        if handler is None:
            return 404, {}, self.error_body(404, f"no route {request.method} {request.path}")
        refused = self.check(request)
        if refused is not None:
            return refused
        for param in sorted(self.rejects):
            if param in (request.body or {}):
                return 400, {}, self.unsupported_body(param)
        if self.delay:
            self._release.wait(self.delay)
        step = self._next(request.body or {})
        if isinstance(step, Stall):
            self._release.wait(step.seconds)
            step = Answer(self.default_text)
        if isinstance(step, Failure):
            return step.status, self.error_headers(step.status), self.error_body(step.status, step.message)
        return 200, {}, getattr(self, handler)(request.body or {}, step)

    def check(self, request: Recorded) -> tuple[int, dict, dict] | None:
        """401 for a key other than ``api_key``, 404 for a model not in ``models``."""
        if self.api_key is not None and self.key_of(request) != self.api_key:
            return 401, {}, self.error_body(401, "invalid api key")
        model = (request.body or {}).get("model")
        if self.models is not None and model not in self.models:
            return 404, {}, self.error_body(404, f"model {model!r} not found")
        return None

    def error_headers(self, status: int) -> dict:
        # keeps an SDK's own retries (when a test turns them on) from sleeping
        return {"retry-after-ms": "10"} if status == 429 or status >= 500 else {}

    # for subclasses
    def key_of(self, request: Recorded) -> str:
        raise NotImplementedError

    def error_body(self, status: int, message: str) -> dict:
        raise NotImplementedError

    def unsupported_body(self, param: str) -> dict:
        return self.error_body(400, f"Unsupported parameter: '{param}' is not supported by this server.")

    # reading the log
    def last(self) -> Recorded:
        assert self.requests, f"{type(self).__name__} received no request"
        return self.requests[-1]


def word_count(value) -> int:
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, list):
        return sum(word_count(v) for v in value)
    if isinstance(value, dict):
        return word_count(value.get("content", value.get("text", "")))
    return 0


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        self._handle("POST")

    def do_GET(self):
        self._handle("GET")

    def _handle(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        headers = {k.lower(): v for k, v in self.headers.items()}
        request = Recorded(method=method, path=self.path.split("?", 1)[0], headers=headers, body=body)
        status, extra_headers, payload = self.server.fake.serve(request)
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in extra_headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test); nothing to answer

    def log_message(self, format, *args):
        pass
