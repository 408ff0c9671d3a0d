"""Read a skill's version history as a person reviews it: each change as a diff, newest first.

Archived row ``vN`` holds the state the skill had at version N and was written when the skill
moved to N+1, so its ``reason`` and ``actor`` describe the change N -> N+1. The top of the
history is the change from the newest archived version to the live body.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from learning.models import SynthesizedSkill


@dataclass(frozen=True)
class DiffLine:
    kind: str  # "add" | "del" | "hunk" | "ctx"
    text: str


@dataclass(frozen=True)
class Change:
    from_version: int
    to_version: int
    reason: str
    actor: str
    archived_at: object
    lines: list[DiffLine] = field(default_factory=list)

    @property
    def unchanged(self) -> bool:
        return not any(line.kind in ("add", "del") for line in self.lines)


def _kind(line: str) -> str:
    if line.startswith("@@"):
        return "hunk"
    if line.startswith("+"):
        return "add"
    if line.startswith("-"):
        return "del"
    return "ctx"


def diff_lines(old: str, new: str, *, old_label: str, new_label: str) -> list[DiffLine]:
    """A unified diff of two bodies, line by line, tagged for colouring."""
    raw = difflib.unified_diff(
        old.splitlines(), new.splitlines(), fromfile=old_label, tofile=new_label, lineterm="", n=2
    )
    return [DiffLine(_kind(line), line) for line in raw if not line.startswith(("---", "+++"))]


def history(skill: SynthesizedSkill) -> list[Change]:
    """Every recorded change, newest first, each diffed against the state it produced."""
    versions = list(skill.versions.order_by("-version"))
    changes, newer_body, newer_version = [], skill.body, skill.version
    for archived in versions:
        changes.append(
            Change(
                from_version=archived.version,
                to_version=newer_version,
                reason=archived.reason,
                actor=archived.actor,
                archived_at=archived.archived_at,
                lines=diff_lines(archived.body, newer_body, old_label=f"v{archived.version}", new_label=f"v{newer_version}"),
            )
        )
        newer_body, newer_version = archived.body, archived.version
    return changes


def rollback_choices(skill: SynthesizedSkill) -> list[int]:
    """Versions a lead can roll back to: every archived one still kept."""
    return list(skill.versions.order_by("-version").values_list("version", flat=True))
