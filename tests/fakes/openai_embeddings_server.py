"""A local HTTP server speaking OpenAI's ``POST /v1/embeddings`` wire format, for tests.

Vectors are deterministic bags of hashed words (texts sharing words point the same way). The
server can be told to answer the next requests with an HTTP error in OpenAI's error shape, to
stall, to return zero vectors, or to return a width other than the one asked for::

    with FakeEmbeddingsServer() as server:
        server.fail(429)            # every request answers 429 until server.behave()
        server.stall(seconds=2)     # answer only after two seconds
        server.zeros()              # all-zero vectors
        server.width(17)            # vectors 17 wide whatever ``dimensions`` asks
        server.requests             # every request body received, in order
        server.headers              # their headers, names lower-cased
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEFAULT_WIDTH = 64

ERRORS = {
    400: ("invalid_request_error", "'input' is too long for this model", None),
    401: ("invalid_request_error", "Incorrect API key provided: sk-wr***ng.", "invalid_api_key"),
    403: ("invalid_request_error", "You are not allowed to access this model.", "model_not_allowed"),
    404: ("invalid_request_error", "The model 'nope' does not exist or you do not have access to it.", "model_not_found"),
    429: ("requests", "Rate limit reached for requests per min (RPM): Limit 3000.", "rate_limit_exceeded"),
    500: ("server_error", "The server had an error while processing your request.", None),
    503: ("server_error", "The engine is currently overloaded, please try again later.", None),
}


def bag_of_words(text: str, width: int) -> list[float]:
    vec = [0.0] * width
    for word in text.lower().split():
        h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
        vec[h % width] += 1.0 if (h >> 63) & 1 else -1.0
    norm = sum(x * x for x in vec) ** 0.5
    return [x / norm for x in vec] if norm else [1.0 / width**0.5] * width


class FakeEmbeddingsServer:
    def __init__(self, api_key: str = "sk-test"):
        self.api_key = api_key
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.behave()
        self._release = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def behave(self) -> None:
        self.status, self.stall_seconds, self.zero_vectors, self.forced_width = 200, 0.0, False, None

    def fail(self, status: int) -> None:
        self.status = status

    def stall(self, seconds: float) -> None:
        self.stall_seconds = seconds

    def release(self) -> None:
        """Answer the stalled requests now; later ones are not stalled."""
        self.stall_seconds = 0.0
        self._release.set()

    def zeros(self) -> None:
        self.zero_vectors = True

    def width(self, width: int) -> None:
        self.forced_width = width

    def __enter__(self) -> FakeEmbeddingsServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._release.set()  # wake any stalled handler so shutdown does not wait on it
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def answer(self, body: dict, authorization: str) -> tuple[int, dict]:
        if self.stall_seconds:
            self._release.wait(self.stall_seconds)
        if authorization != f"Bearer {self.api_key}" and self.status == 200:
            return 401, _error(401)
        if self.status != 200:
            return self.status, _error(self.status)
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not inputs or not body.get("model"):
            return 400, _error(400, "'input' and 'model' are required")
        width = self.forced_width or body.get("dimensions") or DEFAULT_WIDTH
        data = []
        for i, text in enumerate(inputs):
            vector = [0.0] * width if self.zero_vectors else bag_of_words(str(text), width)
            data.append({"object": "embedding", "index": i, "embedding": _encode(vector, body.get("encoding_format"))})
        tokens = sum(len(str(t).split()) for t in inputs)
        return 200, {
            "object": "list",
            "data": data,
            "model": body["model"],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }


def _encode(vector: list[float], encoding_format: str | None):
    if encoding_format == "base64":
        return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
    return vector


def _error(status: int, message: str | None = None) -> dict:
    kind, default_message, code = ERRORS.get(status, ("server_error", "error", None))
    return {"error": {"message": message or default_message, "type": kind, "param": None, "code": code}}


def _handler_for(server: FakeEmbeddingsServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):  # noqa: N802 - the stdlib's name
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if self.path.rstrip("/") != "/v1/embeddings":
                return self._send(404, {"error": {"message": f"Invalid URL (POST {self.path})", "type": "invalid_request_error", "param": None, "code": None}})
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                return self._send(400, _error(400, "We could not parse the JSON body of your request."))
            server.requests.append(body)
            server.headers.append({k.lower(): v for k, v in self.headers.items()})
            status, payload = server.answer(body, self.headers.get("Authorization", ""))
            self._send(status, payload)

        def _send(self, status: int, payload: dict):
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if status == 429:
                self.send_header("Retry-After", "1")
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
                pass

        def log_message(self, *args):  # keep test output quiet
            pass

    return Handler
