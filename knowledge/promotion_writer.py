"""The PromotionWriter seam: a draft page under the unit's container, beneath "Auto-Drafted Skills".

Every writer behaves the same: the parent is created if the container has none, and if it cannot
be, the draft is refused (``DraftRefused``), never filed at the container root, where every agent
could read it. Dedup is the writer's job and is keyed on the title: writing a title that is already
there (as the draft, or as the page a lead published from it) returns that page with
``existed=True``. Drafts carry the ``[Auto-draft]`` prefix, the searches' fail-closed backstop;
publishing moves a draft out of the parent and drops the prefix, leaving the bare title as the key.
"""

from __future__ import annotations

import html
import re
import threading
from dataclasses import dataclass, field
from typing import Protocol

from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from crewlet import config
from crewlet.config.schema import KnowledgeBackend
from knowledge.models import AUTO_DRAFT_PREFIX, AUTO_DRAFTED_PARENT

PROMOTION_AUTHOR = "crewlet-promotion"
DRAFTS_PARENT_BODY = (
    "Procedures several agents of this team arrived at independently, drafted for review. "
    "Nothing under this page is searchable by agents until a lead publishes it by moving it out."
)

WRITERS: dict[KnowledgeBackend, str] = {  # "none" writes nowhere
    "native": "knowledge.backends.native.NativePromotionWriter",
    "confluence": "knowledge.backends.confluence.ConfluencePromotionWriter",
}


class WriteFailed(Exception):
    """The backend did not take the draft; nothing is announced and the next tick retries."""


class DraftRefused(WriteFailed):
    """The Auto-Drafted Skills parent could not be had, so the draft was not filed anywhere."""


@dataclass(frozen=True)
class Draft:
    title: str  # the cluster's deterministic title, without the prefix: the dedup key
    summary: str
    when_to_use: str = ""
    steps: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    source: dict = field(default_factory=dict)  # the skills and seats it came from

    @property
    def draft_title(self) -> str:
        return f"{AUTO_DRAFT_PREFIX} {self.title}"


@dataclass(frozen=True)
class WriteOutcome:
    page_id: str
    page_title: str
    container_key: str
    existed: bool
    url: str = ""


class PromotionWriter(Protocol):
    def existing(self, *, container_key: str, title: str) -> WriteOutcome | None: ...

    def write_draft(self, *, container_key: str, draft: Draft) -> WriteOutcome: ...


def provenance_lines(source: dict) -> list[str]:
    lines = []
    for skill in source.get("skills", []):
        lines.append(f"{skill.get('seat')}: {skill.get('name')} (skill {skill.get('id')})")
    return lines


def when_to_use(draft: Draft) -> str:
    """The "When to use" text, or "" when the summary already says it (a page never repeats itself)."""
    text = " ".join(draft.when_to_use.split())
    return "" if not text or text.lower() in " ".join(draft.summary.split()).lower() else text


def _calls_only(step: str, tools: set[str], known: set[str]) -> bool:
    """Whether every known tool the step names is one of ``tools``."""
    named = {t for t in known if re.search(rf"(?<![\w-]){re.escape(t)}(?![\w-])", step)}
    return named <= tools


def split_steps(draft: Draft) -> tuple[list[str], list[str]]:
    """The steps of the shared procedure (the tool set the title names, ``source["tool_set"]``), then
    the steps only some of the seats took, so the title and the numbered steps name the same tools."""
    shared = set((draft.source or {}).get("tool_set") or [])
    if not shared:
        return list(draft.steps), []
    known = shared | set(draft.tools)
    main = [s for s in draft.steps if _calls_only(s, shared, known)]
    return main, [s for s in draft.steps if s not in main]


def render_markdown(draft: Draft) -> str:
    """The native page body: what a lead reads, then where it came from."""
    parts = [draft.summary.strip()]
    if when_to_use(draft):
        parts.append(f"## When to use\n\n{when_to_use(draft)}")
    steps, some = split_steps(draft)
    if steps:
        parts.append("## Steps\n\n" + "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1)))
    if some:
        parts.append("## Some seats also\n\n" + "\n".join(f"- {s}" for s in some))
    if draft.tools:
        parts.append("## Tools\n\n" + ", ".join(draft.tools))
    origin = provenance_lines(draft.source)
    if origin:
        parts.append("## Where this came from\n\n" + "\n".join(f"- {line}" for line in origin))
    return "\n\n".join(p for p in parts if p)


def render_storage(draft: Draft) -> str:
    """The same body as Confluence storage-format XHTML, every text escaped."""
    esc = html.escape
    parts = [f"<p>{esc(draft.summary.strip())}</p>"]
    if when_to_use(draft):
        parts.append(f"<h2>When to use</h2><p>{esc(when_to_use(draft))}</p>")
    steps, some = split_steps(draft)
    if steps:
        parts.append("<h2>Steps</h2><ol>" + "".join(f"<li>{esc(s)}</li>" for s in steps) + "</ol>")
    if some:
        parts.append("<h2>Some seats also</h2><ul>" + "".join(f"<li>{esc(s)}</li>" for s in some) + "</ul>")
    if draft.tools:
        parts.append("<h2>Tools</h2><p>" + esc(", ".join(draft.tools)) + "</p>")
    origin = provenance_lines(draft.source)
    if origin:
        parts.append("<h2>Where this came from</h2><ul>" + "".join(f"<li>{esc(x)}</li>" for x in origin) + "</ul>")
    return "".join(parts)


def drafts_parent_storage() -> str:
    return f"<p>{html.escape(DRAFTS_PARENT_BODY)}</p>"


_lock = threading.Lock()
_cached: tuple | None = None


def get_promotion_writer() -> PromotionWriter | None:
    """The writer matching ``knowledge.backend`` (one backend, matched); None when it is "none"."""
    global _cached
    spec = config.current().knowledge
    if spec.backend == "none":
        return None
    with _lock:
        if _cached is None or _cached[0] != spec:
            path = WRITERS.get(spec.backend)
            if path is None:
                raise ImproperlyConfigured(
                    f"knowledge.backend: unknown backend {spec.backend!r} (known: {', '.join(sorted(WRITERS))}, none)"
                )
            _cached = (spec, import_string(path)())
        return _cached[1]


def reset_promotion_writer() -> None:
    global _cached
    with _lock:
        _cached = None


__all__ = [
    "AUTO_DRAFTED_PARENT",
    "Draft",
    "DraftRefused",
    "PromotionWriter",
    "WriteFailed",
    "WriteOutcome",
    "get_promotion_writer",
    "render_markdown",
    "render_storage",
    "reset_promotion_writer",
]
