"""What the target repository already has: the artifacts the loop did not write.

Read before recommending, so a lesson resolves against what exists (covered, or an update of that
artifact) instead of proposing another copy. Reads ``CLAUDE.md``, ``AGENTS.md``, the hooks and
permissions in ``.claude/settings.json``, ``.claude/skills/*/SKILL.md``, ``.claude/agents/*`` and
``.claude/hooks/*``. Nothing here writes.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass

MEMORY_FILES = ("CLAUDE.md", "AGENTS.md")
SETTINGS = ".claude/settings.json"
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.+?)\s*$")
_FRONT = re.compile(r"\A---\s*\n(.*?)\n---\s*\n?", re.S)


@dataclass(frozen=True)
class Artifact:
    kind: str  # line | hook | allowlist | skill | agent | hook-script
    path: str  # relative to the repository
    name: str
    text: str
    line: int | None = None


def read_text(root: str, rel: str) -> str | None:
    """The file's contents, or None when there is no such file."""
    path = os.path.join(root, rel)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def front_matter(text: str) -> dict:
    match = _FRONT.match(text)
    out = {}
    if match:
        for line in match.group(1).splitlines():
            if ":" in line and not line.startswith((" ", "\t")):
                key, value = line.split(":", 1)
                out[key.strip()] = value.strip()
    return out


def _memory_lines(root: str, rel: str) -> list[Artifact]:
    text = read_text(root, rel)
    if text is None:
        return []
    return [
        Artifact("line", rel, match.group(1)[:80], match.group(1), i)
        for i, raw in enumerate(text.splitlines(), 1)
        if (match := _BULLET.match(raw))
    ]


def _settings(root: str, warnings: list[str]) -> list[Artifact]:
    text = read_text(root, SETTINGS)
    if text is None:
        return []
    try:
        data = json.loads(text)
    except ValueError as exc:
        warnings.append(f"{SETTINGS}: not valid JSON ({exc}); its hooks and permissions are not inventoried")
        return []
    found = []
    for event, entries in ((data.get("hooks") or {}) if isinstance(data, dict) else {}).items():
        for entry in entries if isinstance(entries, list) else []:
            for hook in (entry.get("hooks") or []) if isinstance(entry, dict) else []:
                if isinstance(hook, dict) and hook.get("command"):
                    found.append(Artifact("hook", SETTINGS, str(hook["command"]), f"{event} {entry.get('matcher', '')}: {hook['command']}"))
    permissions = data.get("permissions") if isinstance(data, dict) else None
    for pattern in (permissions or {}).get("allow") or []:
        found.append(Artifact("allowlist", SETTINGS, str(pattern), str(pattern)))
    return found


def _dir_files(root: str, rel: str, pattern: str) -> list[str]:
    base = os.path.join(root, rel)
    if not os.path.isdir(base):
        return []
    out = []
    for entry in sorted(os.listdir(base)):
        candidate = pattern.format(entry=entry)
        if os.path.isfile(os.path.join(base, candidate)):
            out.append(f"{rel}/{candidate}")
    return out


def _named_files(root: str, kind: str, rels: list[str]) -> list[Artifact]:
    found = []
    for rel in rels:
        text = read_text(root, rel) or ""
        meta = front_matter(text)
        stem = os.path.basename(os.path.dirname(rel)) if rel.endswith("SKILL.md") else os.path.splitext(os.path.basename(rel))[0]
        found.append(Artifact(kind, rel, meta.get("name") or stem, text))
    return found


def inventory(root: str, warnings: list[str] | None = None) -> list[Artifact]:
    """Every artifact under ``root`` (an empty list when there is no repository)."""
    warnings = warnings if warnings is not None else []
    if not root or not os.path.isdir(root):
        return []
    items: list[Artifact] = []
    for rel in MEMORY_FILES:
        items.extend(_memory_lines(root, rel))
    items.extend(_settings(root, warnings))
    items.extend(_named_files(root, "skill", _dir_files(root, ".claude/skills", "{entry}/SKILL.md")))
    items.extend(_named_files(root, "agent", [p for p in _dir_files(root, ".claude/agents", "{entry}") if p.endswith(".md")]))
    items.extend(_named_files(root, "hook-script", _dir_files(root, ".claude/hooks", "{entry}")))
    return items
