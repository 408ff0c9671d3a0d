"""The ``[providers]`` table in force, read through the app that owns the config.

``crewlet`` owns ``crewlet.toml`` and registers its reader here in ``CrewletConfig.ready``; the
auxiliary seam and the embedder seam call ``providers()`` on every request, so a reloaded table
serves from the next call. A hook rather than an argument: every embed and every auxiliary call
resolves its model from this table, and passing it in would have each of their many callers read
the config itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from django.core.exceptions import ImproperlyConfigured

if TYPE_CHECKING:
    from crewlet.config.schema import Providers

_reader: Callable[[], Providers] | None = None


def register(reader: Callable[[], Providers]) -> None:
    """Set the function that returns the ``[providers]`` table in force."""
    global _reader
    _reader = reader


def providers() -> Providers:
    """The ``[providers]`` table in force (``llm`` aliases and ``embeddings``)."""
    if _reader is None:
        raise ImproperlyConfigured("no [providers] reader registered: crewlet's AppConfig.ready registers it")
    return _reader()
