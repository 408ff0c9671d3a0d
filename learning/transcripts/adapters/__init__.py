"""The transcript adapter protocol: ``read(source, watermark) -> (episodes, new_watermark, warnings)``.

The watermark is the adapter's own opaque string: the caller stores it verbatim and hands it back,
and nothing else reads it. Everything an adapter returns has already been scrubbed. Besides the
three-tuple, a ``ReadResult`` carries ``sessions``: per-session metadata and what was observed in
the newly read part (hooks fired, skills loaded), which telemetry counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string


@dataclass
class Episode:
    """Something tried, gone wrong, and corrected (all text already scrubbed)."""

    session_id: str
    key: str  # stable within the session: re-reading yields the same key
    kind: str  # corrected | self_corrected
    ask: str
    attempt: str
    failure: str
    correction: str
    started_at: datetime | None = None
    ended_at: datetime | None = None


@dataclass
class SessionSeen:
    session_id: str
    cwd: str = ""
    started_at: datetime | None = None
    ended_at: datetime | None = None
    human_messages: int = 0
    pseudo_user: dict = field(default_factory=dict)  # kind -> count, newly read lines only
    observations: dict = field(default_factory=dict)  # hooks/skills/agents/commands/quotes -> {name: count}


class ReadResult(tuple):
    """``(episodes, new_watermark, warnings)``, with ``sessions``, ``bytes_read`` and ``scrubbed`` alongside."""

    restarted: bool
    records: dict[str, int]
    sessions: list
    bytes_read: int
    scrubbed: dict[str, int]

    def __new__(cls, episodes, watermark, warnings, *, sessions=(), bytes_read=0, scrubbed=None, restarted=False, records=None):
        self = super().__new__(cls, (list(episodes), watermark, list(warnings)))
        self.restarted = restarted  # read from the start again (rewritten file): counts replace, not add
        self.records = dict(records or {})  # newly read records by type
        self.sessions = list(sessions)
        self.bytes_read = bytes_read
        self.scrubbed = dict(scrubbed or {})  # placeholder label -> count, newly read lines only
        return self

    @property
    def episodes(self) -> list[Episode]:
        return self[0]

    @property
    def watermark(self) -> str:
        return self[1]

    @property
    def warnings(self) -> list[str]:
        return self[2]


class Adapter(Protocol):
    name: str

    def read(self, source: str, watermark: str) -> ReadResult:
        """Episodes after ``watermark`` in ``source``, the new watermark, and warnings (never raises on bad lines)."""

    def sources(self, path: str) -> list[str]:
        """The transcript files under ``path`` (a file is its own single source)."""


ADAPTERS = {"claude-code": "learning.transcripts.adapters.claude_code.ClaudeCodeAdapter"}


def get_adapter(name: str) -> Adapter:
    path = ADAPTERS.get(name)
    if path is None:
        raise ImproperlyConfigured(f"unknown transcript adapter {name!r} (known: {', '.join(sorted(ADAPTERS))})")
    return import_string(path)()
