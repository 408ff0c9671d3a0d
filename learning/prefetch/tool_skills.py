"""Tool-skill guidance: short fragments appended to the prompt only when a matching tool is registered.

The bundled fragments live in ``examples/tool-skills/*.md``, each with front matter naming its
trigger (``tool:`` one tool, or ``any_of:`` a list; entries may be glob patterns such as
``confluence_*`` for an MCP server's tools). The retrieval re-search fragment states its rule once
and keeps one line per re-query tool the role actually has (lines marked ``<!-- for: ... -->``).
"""

from __future__ import annotations

import fnmatch
import functools
import re
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

TOOL_SKILLS_DIR = Path(settings.BASE_DIR) / "examples" / "tool-skills"
_FOR = re.compile(r"^\s*<!--\s*for:\s*(.*?)\s*-->\s*$")


@dataclass(frozen=True)
class ToolSkill:
    key: str
    triggers: tuple[str, ...]
    body: str

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


def parse(text: str, *, default_key: str) -> ToolSkill:
    """A fragment: ``---`` front matter (``key``, ``tool`` or ``any_of``), then its Markdown body."""
    if not text.startswith("---"):
        raise ValueError(f"tool skill {default_key}: no front matter")
    _, front, body = text.split("---", 2)
    meta = {}
    for line in front.strip().splitlines():
        name, _, value = line.partition(":")
        meta[name.strip()] = value.strip()
    if "tool" in meta:
        triggers = (meta["tool"].strip("\"'"),)
    elif "any_of" in meta:
        triggers = tuple(_split_list(meta["any_of"]))
    else:
        raise ValueError(f"tool skill {default_key}: front matter names neither tool nor any_of")
    return ToolSkill(key=meta.get("key") or default_key, triggers=triggers, body=body.strip())


@functools.lru_cache(maxsize=1)
def bundled() -> tuple[ToolSkill, ...]:
    paths = sorted(TOOL_SKILLS_DIR.glob("*.md"))
    return tuple(parse(p.read_text(encoding="utf-8"), default_key=p.stem) for p in paths)


def guidance(tools) -> tuple[str, list[str]]:
    """The guidance text for a role's registered tools and the keys of the fragments it holds."""
    tools = list(tools or [])
    picked = [skill for skill in bundled() if skill.applies(tools)]
    return "\n\n".join(skill.render(tools) for skill in picked), [skill.key for skill in picked]
