"""A skill body in SKILL.md shape: front matter, the procedure, references, what practice added.

Bullets collect under one ``## What practice added`` heading at the end of the body, so a reader
sees the procedure first and what practice added to it second. Reference files added by skill
reflection live under ``## References`` between the two (every write goes through the versioned
body, so a reference is archived and rolled back with the procedure it belongs to).
"""

from __future__ import annotations

PRACTICE_HEADING = "## What practice added"
REFERENCES_HEADING = "## References"
SUCCESS_PREFIX = "Observed in practice:"
FAILURE_PREFIX = "Counter-example:"


def skill_md(*, name: str, description: str, body: str) -> str:
    """The body with SKILL.md front matter; a body that already has front matter is kept verbatim."""
    if body.lstrip().startswith("---"):
        return body
    one_line = " ".join(description.split())
    return f"---\nname: {name}\ndescription: {one_line}\n---\n\n{body.strip()}\n"


def _split(body: str) -> tuple[list[str], list[str], list[str]]:
    procedure: list[str] = []
    references: list[str] = []
    practice: list[str] = []
    current = procedure
    for line in body.splitlines():
        stripped = line.strip()
        if stripped == PRACTICE_HEADING:
            current = practice
            continue
        if stripped == REFERENCES_HEADING:
            current = references
            continue
        if current is not procedure and stripped.startswith("## "):
            current = procedure
        current.append(line)
    return procedure, references, practice


def _join(procedure: list[str], references: list[str], practice: list[str]) -> str:
    parts = ["\n".join(procedure).rstrip()]
    if any(line.strip() for line in references):
        parts.append(REFERENCES_HEADING + "\n" + "\n".join(references).strip())
    if any(line.strip() for line in practice):
        parts.append(PRACTICE_HEADING + "\n" + "\n".join(practice).strip())
    return "\n\n".join(parts) + "\n"


def procedure_of(body: str) -> str:
    return "\n".join(_split(body)[0])


def practice_bullets(body: str) -> list[str]:
    return [line.strip()[2:] for line in _split(body)[2] if line.strip().startswith("- ")]


def bullet(*, outcome: str, observation: str) -> str:
    """``Observed in practice:`` on success, ``Counter-example:`` on failure; a prefix the model wrote is not doubled."""
    prefix = SUCCESS_PREFIX if outcome == "done" else FAILURE_PREFIX
    text = observation.strip()
    for known in (SUCCESS_PREFIX, FAILURE_PREFIX):
        if text.lower().startswith(known.lower()):
            text = text[len(known):].strip()
    return f"{prefix} {text}"


def append_practice(body: str, line: str) -> str:
    procedure, references, practice = _split(body)
    return _join(procedure, references, [*practice, f"- {line}"])


def add_reference(body: str, *, path: str, content: str) -> str:
    procedure, references, practice = _split(body)
    block = [f"### {path}", content.strip(), ""]
    return _join(procedure, [*references, *block], practice)


def has_reference(body: str, path: str) -> bool:
    return any(line.strip() == f"### {path}" for line in _split(body)[1])
