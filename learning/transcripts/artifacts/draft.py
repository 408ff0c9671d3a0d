"""Drafting: the real file, rendered, and a unified diff against what exists.

The model (``artifact_draft``) writes the body once per lesson set; the draft is keyed on a hash of
the lesson text, so re-running the loop reuses it and makes no model call. Rendering the file
around the body (front matter, the CLAUDE.md section, the settings JSON) is deterministic.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core import auxiliary, words
from learning.purposes import artifact_draft
from learning.transcripts.models import Draft

if TYPE_CHECKING:
    from crewlet.models import Seat

SECTION = {"rule": "## Rules", "fact": "## Facts"}
_BACKTICK = re.compile(r"`([^`]+)`")


def slug(text: str) -> str:
    """An artifact's file name: the shared slug, shorter, never empty."""
    return words.slug(text, limit=60) or "lesson"


def draft_key(tier: str, scope_key: str, lesson_texts: list[str]) -> str:
    from learning.transcripts.shards import text_hash

    material = "\n".join([tier, scope_key, *sorted(text_hash(t) for t in lesson_texts)])
    return hashlib.sha256(material.encode()).hexdigest()


def get_draft(*, seat: Seat, tier: str, scope: str, scope_key: str, lessons: list[str], existing: str = "", stage: str = "background") -> Draft:
    """The draft for this lesson set: stored once, reused on every later run."""
    key = draft_key(tier, scope_key, lessons)
    found = Draft.objects.filter(key=key).first()
    if found is not None:
        return found
    result = auxiliary.call(
        seat=seat, stage=stage, purpose=artifact_draft.NAME,
        inputs=artifact_draft.Inputs(tier=tier, scope=scope, name=slug(scope_key), lessons=lessons, existing=existing),
    )
    value: artifact_draft.Answer = result.value
    draft, _created = Draft.objects.get_or_create(
        key=key,
        defaults=dict(
            tier=tier, name=slug(value.name or scope_key), description=" ".join(value.description.split()),
            body=value.body, provider=result.provider, model=result.model,
        ),
    )
    return draft


@dataclass
class Rendered:
    contents: str
    notes: str = ""


def commands_in(lessons: list[str]) -> list[str]:
    seen = []
    for lesson in lessons:
        for command in _BACKTICK.findall(lesson):
            if command not in seen:
                seen.append(command)
    return seen


def render_skill(draft: Draft, existing: str | None) -> Rendered:
    return Rendered(f"---\nname: {draft.name}\ndescription: {draft.description}\n---\n\n{draft.body.strip()}\n")


def render_agent(draft: Draft, existing: str | None) -> Rendered:
    return Rendered(
        f"---\nname: {draft.name}\ndescription: {draft.description}\ntools: Read, Grep, Glob, Bash\n---\n\n{draft.body.strip()}\n"
    )


def render_hook(draft: Draft, existing: str | None, lessons: list[str]) -> Rendered:
    """A PreToolUse hook script: exits 2 (blocking, with the reason) when a guarded command fails."""
    lines = ["#!/usr/bin/env bash", f"# {draft.name}: {draft.description}"]
    lines += [f"# {line}" if line else "#" for line in draft.body.strip().splitlines()]
    lines += ["set -uo pipefail", 'input="$(cat)"']
    if any("commit" in lesson.lower() for lesson in lessons):
        lines.append("case \"$input\" in *'git commit'*) ;; *) exit 0 ;; esac")
    commands = commands_in(lessons)
    for command in commands:
        # the reason single-quoted: in double quotes bash ran the backticked command again, and expanded its $
        lines.append(f"{command} >&2 || {{ echo {shlex.quote(f'{draft.name}: `{command}` failed')} >&2; exit 2; }}")
    if not commands:
        lines.append(f"echo {shlex.quote(draft.description)} >&2")
    registration = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": f".claude/hooks/{draft.name}.sh"}]}]}}
    notes = "Register it by hand in .claude/settings.json (a shared file):\n" + json.dumps(registration, indent=2)
    return Rendered("\n".join(lines) + "\n", notes)


def render_section(tier: str, draft: Draft, existing: str | None) -> Rendered:
    """CLAUDE.md with the lesson lines added under its Rules or Facts section (created if missing)."""
    text = existing or ""
    heading = SECTION.get(tier, "## Rules")
    new_lines = [line for line in draft.body.strip().splitlines() if line.strip() and line.strip() not in text]
    if not new_lines:
        return Rendered(text)
    lines = text.splitlines()
    if heading in lines:
        at = lines.index(heading) + 1
        while at < len(lines) and not lines[at].startswith("## "):
            at += 1
        while at > 0 and not lines[at - 1].strip():
            at -= 1
        lines[at:at] = new_lines
    else:
        lines += (["", heading, ""] if lines else [heading, ""]) + new_lines
    return Rendered("\n".join(lines) + "\n")


def render_allowlist(draft: Draft, existing: str | None, lessons: list[str]) -> Rendered:
    data = json.loads(existing) if existing else {}
    allow = data.setdefault("permissions", {}).setdefault("allow", [])
    for command in commands_in(lessons):
        pattern = f"Bash({command}:*)"
        if pattern not in allow:
            allow.append(pattern)
    return Rendered(json.dumps(data, indent=2) + "\n")


def render_update(draft: Draft, existing: str | None, line: int | None) -> Rendered:
    """An existing artifact with the lesson: its line replaced, or the lesson added to the file."""
    text = existing or ""
    if line:
        lines = text.splitlines()
        indent = re.match(r"^\s*(?:[-*+]|\d+[.)])\s+", lines[line - 1])
        body = draft.body.strip().lstrip("-*+ ").strip()
        lines[line - 1] = (indent.group(0) if indent else "- ") + body
        return Rendered("\n".join(lines) + "\n")
    return Rendered(text.rstrip("\n") + "\n\n" + draft.body.strip() + "\n")


def render_delete(existing: str | None, line: int | None) -> Rendered:
    if line:
        lines = (existing or "").splitlines()
        del lines[line - 1]
        return Rendered("\n".join(lines) + "\n")
    return Rendered("", "Delete this file by hand.")


def unified_diff(path: str, existing: str | None, contents: str) -> str:
    return "".join(
        difflib.unified_diff(
            (existing or "").splitlines(keepends=True),
            contents.splitlines(keepends=True),
            fromfile=f"a/{path}" if existing is not None else "/dev/null",
            tofile=f"b/{path}",
        )
    )
