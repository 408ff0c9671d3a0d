"""The Tool Skills registry's pages: the children of a configured parent page, read from the backend.

Operators edit these pages at runtime (``knowledge.tool_skills``: a container and a parent title);
each is a tool-skill fragment in the bundled ``examples/tool-skills/`` format, front matter first.
The registry is best effort: a backend that cannot be read leaves the bundled defaults serving.
"""

from __future__ import annotations

import html
import logging
import re
from dataclasses import dataclass

from crewlet import config
from knowledge.searcher import get_searcher

log = logging.getLogger("knowledge.tool_skills")

_BREAK = re.compile(r"<br\s*/?>|</(?:p|li|h[1-6]|pre|div)>", re.I)
_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class RegistryPage:
    page_id: str
    container_key: str
    title: str
    text: str  # the fragment as plain text: front matter, then its Markdown body


def storage_text(storage: str) -> str:
    """Confluence storage XHTML as the plain lines an operator typed (one paragraph a line)."""
    return html.unescape(_TAG.sub("", _BREAK.sub("\n", storage))).strip()


def tool_skill_pages() -> list[RegistryPage]:
    """The registry's pages in title order; [] when no registry is configured or it cannot be read."""
    spec = config.current().knowledge
    registry = spec.tool_skills
    if not registry.container:
        return []
    read = getattr(get_searcher(), "tool_skill_pages", None)
    if read is None:  # knowledge.backend = "none": no pages anywhere
        return []
    try:
        return sorted(read(container_key=registry.container, parent=registry.parent), key=lambda p: p.title)
    except Exception as exc:  # best effort: the bundled defaults keep serving
        log.warning("the Tool Skills registry could not be read (%s); serving the bundled defaults", exc)
        return []
