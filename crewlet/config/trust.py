"""Where the service sends data and which secrets it reads: the operator's decision, not the editor's.

Two deploy-time lists, read from the environment by the settings, bound every config however it
arrives: ``CREWLET_ALLOWED_PROVIDER_HOSTS`` (the hosts a provider, the embedder or Confluence may be
reached at; ``host`` allows any port, ``host:port`` that port only) and ``CREWLET_ALLOWED_SECRET_ENV``
(the environment variables an ``api_key_env``, ``token_env`` or a seat's ``mcp_env`` may name). A
provider with no ``base_url`` is reached at its SDK's own host, which must be listed too.

The admin's editor is narrower still (``editor_changes``): it may change the learning knobs, but not a
provider's, the embedder's or Confluence's endpoint or secret variable, nor a seat's ``mcp_env``;
those change in the file on the server or with ``manage.py apply_config``.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings

from crewlet.config import schema
from crewlet.config.parse import Problem

DEFAULT_HOSTS = {"openai_compat": "api.openai.com", "anthropic": "api.anthropic.com"}  # an empty base_url's
SENDS = {"openai_compat", "anthropic"}  # the kinds that reach a host; offline, scripted, local, hashing do not

HOSTS_SETTING = "CREWLET_ALLOWED_PROVIDER_HOSTS"
SECRETS_SETTING = "CREWLET_ALLOWED_SECRET_ENV"
EDITOR_REFUSAL = ("the admin's editor does not change where data is sent or which secrets are read; change it in "
                  "the config file on the server or with manage.py apply_config")


def _host_of(url: str) -> tuple[str, int | None] | None:
    try:
        parts = urlsplit(url)
        return (parts.hostname or "").lower(), parts.port
    except ValueError:
        return None


def _host_allowed(host: str, port: int | None) -> bool:
    for entry in getattr(settings, HOSTS_SETTING, ()):
        name, _, allowed_port = entry.strip().lower().partition(":")
        if name == host and (not allowed_port or (port is not None and allowed_port == str(port))):
            return True
    return False


def _endpoint_problem(path: str, url: str) -> Problem | None:
    found = _host_of(url)
    if found is None or not found[0]:
        return Problem(path, f"{url!r} is not a URL with a host")
    host, port = found
    if _host_allowed(host, port):
        return None
    shown = f"{host}:{port}" if port else host
    return Problem(path, f"{shown} is not an allowed provider host; the operator lists hosts in {HOSTS_SETTING}")


def _secret_problem(path: str, name: object) -> Problem | None:
    if name in ("", None) or name in getattr(settings, SECRETS_SETTING, ()):
        return None
    return Problem(path, f"{name!r} is not an allowed secret variable; the operator lists them in {SECRETS_SETTING}")


def endpoints(config: schema.Config) -> dict[str, str]:
    """Every URL the config sends data to, by key path."""
    out = {}
    for alias, spec in config.providers.llm.items():
        if spec.kind in SENDS:
            out[f"providers.llm.{alias}.base_url"] = spec.base_url or f"https://{DEFAULT_HOSTS[spec.kind]}"
    embeddings = config.providers.embeddings
    if embeddings.kind in SENDS:
        out["providers.embeddings.base_url"] = embeddings.base_url or f"https://{DEFAULT_HOSTS[embeddings.kind]}"
    if config.knowledge.confluence.url:
        out["knowledge.confluence.url"] = config.knowledge.confluence.url
    return out


def secret_names(config: schema.Config) -> dict[str, object]:
    """Every environment variable the config reads a secret from, by key path."""
    out: dict[str, object] = {}
    for alias, spec in config.providers.llm.items():
        out[f"providers.llm.{alias}.api_key_env"] = spec.api_key_env
    out["providers.embeddings.api_key_env"] = config.providers.embeddings.api_key_env
    out["knowledge.confluence.token_env"] = config.knowledge.confluence.token_env
    for handle, seat in config.seats.items():
        for key, name in seat.mcp_env.items():
            out[f"seats.{handle}.mcp_env.{key}"] = name
    return out


def outside_allowlist(config: schema.Config) -> list[Problem]:
    """The endpoints and secret variables of ``config`` that the deploy-time lists do not allow."""
    problems = [_endpoint_problem(path, url) for path, url in endpoints(config).items()]
    problems += [_secret_problem(path, name) for path, name in secret_names(config).items()]
    return [p for p in problems if p is not None]


def editor_changes(old: schema.Config, new: schema.Config) -> list[Problem]:
    """What the editor's ``new`` changes of ``old``'s endpoints and secret variables (a provider that starts
    sending, a new one included)."""
    reach_old, reach_new = {**endpoints(old), **secret_names(old)}, {**endpoints(new), **secret_names(new)}
    problems = []
    for path, value in reach_new.items():
        if value != reach_old.get(path, ""):
            problems.append(Problem(path, f"set to {value!r}: {EDITOR_REFUSAL}"))
    return list(dict.fromkeys(problems))
