"""What the two SDK-backed chat providers share: the key, the client, and the error mapping.

Both official SDKs raise the same family (``APIStatusError`` with a ``status_code``,
``APITimeoutError``, ``APIConnectionError``), so one table maps them to the typed errors the
auxiliary chain falls through on. The status decides, not the SDK's class, so a status an SDK
has no class for (Anthropic's 529) is still mapped.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from contextlib import contextmanager
from urllib.parse import urlsplit

from core.providers.errors import (
    ConfigurationError,
    ProviderError,
    RateLimitedError,
    RefusedError,
    TransientError,
    UnsupportedParameter,
)

# a keyless local server (Ollama, llama.cpp, an unauthenticated vLLM) still needs some bearer value
LOCAL_PLACEHOLDER_KEY = "local-no-key"
LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0"}

CONFIGURATION_STATUSES = {401, 402, 403, 404}
REFUSED_STATUSES = {400, 413, 422}
RATE_LIMITED_STATUS = 429
TRANSIENT_STATUSES = {408, 409}  # a request timeout and a lock conflict both answer if sent again


def is_local(base_url: str) -> bool:
    host = (urlsplit(base_url).hostname or "").lower()
    return host in LOCAL_HOSTS or host.startswith("127.") or host.endswith(".localhost")


def api_key(*, alias: str, spec, base_url: str) -> str:
    """The key from the env var ``spec.api_key_env`` names, read at call time so a rotation needs no restart."""
    name = spec.api_key_env
    value = os.environ.get(name, "") if name else ""
    if value:
        return value
    if is_local(base_url):
        return LOCAL_PLACEHOLDER_KEY
    if not name:
        raise ConfigurationError(
            f"providers.llm.{alias}: {base_url} needs a key and api_key_env names no variable", sent=False
        )
    raise ConfigurationError(f"providers.llm.{alias}: the environment variable {name} (api_key_env) is not set", sent=False)


def require_model(*, alias: str, spec) -> str:
    if not spec.model:
        raise ConfigurationError(f"providers.llm.{alias}.model: no model named", sent=False)
    return spec.model


class ClientCache:
    """One SDK client per key value: a rotated key gets a fresh client, an unchanged one reuses it."""

    def __init__(self, factory: Callable[[str], object]):
        self._factory = factory
        self._lock = threading.Lock()
        self._key: str | None = None
        self._client: object | None = None

    def get(self, key: str):
        with self._lock:
            if self._client is None or self._key != key:
                self._key, self._client = key, self._factory(key)
            return self._client


class ContextOverflow(ConfigurationError):
    """The prompt is longer than the model's context window: the provider's ``context_tokens`` is set
    above what the server was started with (llama.cpp's ``-c``)."""

    kind = "context_overflow"


# llama.cpp ("request (1087 tokens) exceeds the available context size"), OpenAI ("maximum context length
# is 4097 tokens"), vLLM, Anthropic ("prompt is too long")
CONTEXT_OVERFLOW = re.compile(
    r"exceeds? the (?:available )?context|context (?:length|size|window)[^.]*exceed|maximum context length"
    r"|context_length_exceeded|prompt is too long|too many tokens", re.I)


def error_for_status(
    *, alias: str, status: int, detail: str, key_env: str = "", optional: tuple[str, ...] = ()
) -> ProviderError:
    """The typed error for an HTTP status an endpoint answered.

    A 400/422 naming one of the ``optional`` parameters the request sent is ``UnsupportedParameter``
    (its ``param`` says which), so the provider can retry once without it.
    """
    where = f"providers.llm.{alias}"
    if status in (400, 413, 422) and CONTEXT_OVERFLOW.search(detail):
        return ContextOverflow(
            f"{where}: the prompt does not fit the model's context window; set {where}.context_tokens to the "
            f"server's context size or below ({status}: {detail})")
    if status in (400, 422):
        named = unsupported_parameter(detail, optional)
        if named:
            error = UnsupportedParameter(f"{where}: the endpoint does not take {named} ({status}: {detail})")
            error.param = named
            return error
    if status in (401, 403):
        source = f" from {key_env}" if key_env else ""
        return ConfigurationError(f"{where}: the endpoint rejected the key{source} ({status}: {detail})")
    if status == 404:
        return ConfigurationError(f"{where}: the endpoint does not serve this model or path (404: {detail})")
    if status in CONFIGURATION_STATUSES:
        return ConfigurationError(f"{where}: the account cannot be served ({status}: {detail})")
    if status in REFUSED_STATUSES:
        return RefusedError(f"{where}: the provider refused this input ({status}: {detail})")
    if status == RATE_LIMITED_STATUS:
        return RateLimitedError(f"{where}: rate limited (429: {detail})")
    if status >= 500 or status in TRANSIENT_STATUSES:
        return TransientError(f"{where}: the provider could not answer now ({status}: {detail})")
    return ConfigurationError(f"{where}: unexpected answer ({status}: {detail})")


def unsupported_parameter(detail: str, optional: tuple[str, ...]) -> str:
    """The optional parameter a refusal's message names ("Unsupported parameter: 'max_tokens'",
    "response_format is not supported", "Unrecognized request argument supplied: reasoning_effort")."""
    lowered = detail.lower()
    named: dict[str, int] = {}
    for name in optional:
        match = re.search(rf"(?<![a-z_]){re.escape(name)}(?![a-z_])", lowered)
        if match:
            named[name] = match.start()
    # "max_tokens is not supported ... use max_completion_tokens instead" names both: the first is refused
    return min(named, key=lambda name: named[name]) if named else ""


@contextmanager
def translated(sdk, *, alias: str, key_env: str = "", optional: tuple[str, ...] = ()):
    """Re-raise ``sdk``'s exceptions as the typed provider errors."""
    try:
        yield
    except sdk.APIStatusError as exc:
        raise error_for_status(
            alias=alias, status=exc.status_code, detail=_detail(exc), key_env=key_env, optional=optional
        ) from exc
    except sdk.APITimeoutError as exc:
        raise TransientError(f"providers.llm.{alias}: timed out") from exc
    except sdk.APIConnectionError as exc:
        raise TransientError(f"providers.llm.{alias}: could not reach the endpoint ({exc})") from exc
    except sdk.APIError as exc:  # an answer that is not the API's shape, say
        raise TransientError(f"providers.llm.{alias}: {exc}") from exc


def _detail(exc) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            param = f" (param: {inner['param']})" if inner.get("param") else ""
            return f"{inner['message']}{param}"
    return str(getattr(exc, "message", "") or exc)


def estimated_tokens(messages: list[dict], text: str) -> tuple[int, int]:
    """Word counts, for an endpoint that answers without usage (a stated estimate, as offline's)."""
    used = sum(len(str(m.get("content", "")).split()) for m in messages)
    return used, len(text.split())
