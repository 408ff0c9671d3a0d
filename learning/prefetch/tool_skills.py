"""Tool-skill guidance: short fragments appended to the prompt only when a matching tool is available.

The fragments come from the Tool Skills registry: knowledge-base pages operators edit at runtime
(``knowledge.tool_skills``, read through ``knowledge.tool_skill_pages``), with the bundled
``examples/tool-skills/*.md`` as the defaults a page of the same key overrides. Each has front matter
naming its trigger (``tool:`` one tool, or ``any_of:`` a list; entries may be glob patterns such as
``confluence_*`` for an MCP server's tools). The retrieval re-search fragment states its rule once
and keeps one line per re-query tool the seat actually has (lines marked ``<!-- for: ... -->``).
A builtin withdrawn for the seat (``refine_skill`` while refinement is off) triggers nothing. Each
fragment loaded is one ``skill_used`` event, ``source_kind: registry``.
"""

from __future__ import annotations

import fnmatch
import functools
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings
from django.utils.text import slugify

from core import events
from knowledge.tool_skill_pages import tool_skill_pages
from learning import tool_names
from learning.events import SkillUsed

if TYPE_CHECKING:
    from crewlet.models import Seat

log = logging.getLogger("learning.prefetch")

TOOL_SKILLS_DIR = Path(settings.BASE_DIR) / "examples" / "tool-skills"
_FOR = re.compile(r"^\s*<!--\s*for:\s*(.*?)\s*-->\s*$")


@dataclass(frozen=True)
class ToolSkill:
    key: str
    triggers: tuple[str, ...]
    body: str
    page_id: str = ""  # the registry page it was read from; "" for a bundled default
    container_key: str = ""

    def applies(self, tools) -> bool:
        return any(matches(pattern, tools) for pattern in self.triggers)

    def render(self, tools) -> str:
        """The body with every per-tool line whose tools the role lacks left out."""
        out, condition = [], None
        for line in self.body.splitlines():
            marker = _FOR.match(line)
            if marker:
                condition = _split_list(marker.group(1))
                continue
            if condition is not None and line.strip():
                if any(matches(p, tools) for p in condition):
                    out.append(line)
                condition = None
                continue
            out.append(line)
        return "\n".join(out).strip()


def matches(pattern: str, tools) -> bool:
    return any(fnmatch.fnmatchcase(tool, pattern) for tool in tools)


def _split_list(text: str) -> list[str]:
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    return [item.strip().strip("\"'") for item in text.split(",") if item.strip()]


def parse(text: str, *, default_key: str, page_id: str = "", container_key: str = "") -> ToolSkill:
    """A fragment: ``---`` front matter (``key``, ``tool`` or ``any_of``), then its Markdown body."""
    if not text.startswith("---"):
        raise ValueError(f"tool skill {default_key}: no front matter")
    _, front, body = text.split("---", 2)
    meta = {}
    for line in front.strip().splitlines():
        name, _, value = line.partition(":")
        meta[name.strip()] = value.strip()
    triggers: tuple[str, ...]
    if "tool" in meta:
        triggers = (meta["tool"].strip("\"'"),)
    elif "any_of" in meta:
        triggers = tuple(_split_list(meta["any_of"]))
    else:
        raise ValueError(f"tool skill {default_key}: front matter names neither tool nor any_of")
    return ToolSkill(key=meta.get("key") or default_key, triggers=triggers, body=body.strip(), page_id=page_id,
                     container_key=container_key)


@functools.lru_cache(maxsize=1)
def bundled() -> tuple[ToolSkill, ...]:
    paths = sorted(TOOL_SKILLS_DIR.glob("*.md"))
    return tuple(parse(p.read_text(encoding="utf-8"), default_key=p.stem) for p in paths)


def catalogue() -> list[ToolSkill]:
    """The registry's fragments over the bundled defaults, by key (a page that does not parse is skipped)."""
    by_key = {skill.key: skill for skill in bundled()}
    for page in tool_skill_pages():
        try:
            skill = parse(page.text, default_key=slugify(page.title), page_id=page.page_id,
                          container_key=page.container_key)
        except ValueError as exc:
            log.warning("Tool Skills page %r (%s) skipped: %s", page.title, page.page_id, exc)
            continue
        by_key[skill.key] = skill
    return [by_key[key] for key in sorted(by_key)]


def available_tools(seat: Seat, registered) -> list[str]:
    """The registered tools the seat can really call: a builtin withdrawn for it is not one of them."""
    withdrawn = tool_names.withdrawn(seat)
    return [name for name in registered or () if name not in withdrawn]


def guidance(seat: Seat, registered, *, turn_id: str = "", announce=None) -> tuple[str, list[str]]:
    """The guidance text for the seat's available tools and the keys of the fragments it holds.

    Each fragment is one ``skill_used`` event, handed to ``announce`` (the prefetch's one bulk
    insert) or, without it, published now.
    """
    tools = available_tools(seat, registered)
    picked = [skill for skill in catalogue() if skill.applies(tools)]
    for skill in picked:
        used = SkillUsed(source_kind="registry", key=skill.key, source_page_id=str(skill.page_id or ""),
                         source_container=skill.container_key or "")
        if announce is not None:
            announce(used)
        else:
            events.publish(used, seat=seat, turn_id=turn_id)
    return "\n\n".join(skill.render(tools) for skill in picked), [skill.key for skill in picked]
