"""The reflection section the persistence pass's prompt gains when the conversation's signal is set.

The prompt is the policy: decide first whether anything is worth keeping, climb the preference
ladder, never capture what the bans name. The rails themselves are enforced in code
(``learning.reflection.workers.skill_reflector``), not trusted to the prompt.
"""

from __future__ import annotations

from core.words import sentences
from learning.purposes.describe import TurnInputs
from learning.purposes.offline import heuristics as h

SECTION = """## Skill reflection

This pass may also maintain the agent's own skills (the procedures it follows). Decide first whether anything from this turn is worth keeping as procedure at all. No skill write is the common case. The strong signal for a write is a person correcting how the agent went about the work.

If something is worth keeping, climb this ladder and stop at the first rung that fits:
1. Patch the skill that governed this work.
2. Patch a related skill.
3. Add a references/ file to one of them.
4. Only then create a new skill, named for the class of work, never for this incident.

Never capture:
- a failure that depends on the environment;
- a claim that a tool does not work (it hardens into a refusal that outlives the problem);
- a transient error;
- a one-off narrative of what happened this time;
- an unresolved failure dressed up as procedure.

Rails: you may change only the agent's own skills listed below; a pinned skill is read-only; read a skill before you write it (a read action shows you its body and asks you again, and your last answer is the one kept); delete means archive.

Skill actions go in "skill_actions", a list in the same JSON object:
{"action": "read", "name": "..."}
{"action": "patch", "name": "...", "old": "exact text in the body", "new": "its replacement", "reason": "..."}
{"action": "add_reference", "name": "...", "file": "references/<file>.md", "content": "...", "reason": "..."}
{"action": "create", "name": "...", "description": "...", "body": "SKILL.md Markdown", "reason": "..."}
{"action": "archive", "name": "...", "reason": "..."}
An empty list means no skill change."""


def render_context(reflection: dict) -> str:
    lines = ["The agent's own skills:"]
    skills = reflection.get("skills") or []
    if not skills:
        lines.append("(none)")
    for s in skills:
        pinned = " (pinned, read-only)" if s.get("pinned") else ""
        tools = ", ".join(s.get("tool_sequence") or []) or "none recorded"
        lines.append(f"- {s['name']}{pinned}: {s.get('description', '')} [tools: {tools}]")
    read = reflection.get("read") or {}
    if read:
        lines.append("\nSkills you have read:")
        for name, body in read.items():
            lines.append(f"### {name}\n{body}")
    if reflection.get("memory_closed"):
        lines.append("\nThe turn already persisted its own notes: answer classification NOOP and decide only about skills.")
    return "\n".join(lines)


def offline_actions(inputs: TurnInputs, reflection: dict) -> list[dict]:
    """Read, then patch, the governing skill when a person corrected the procedure; else nothing."""
    fix = _correction(inputs)
    if fix is None:
        return []
    who, sentence = fix
    governing = _governing(inputs, reflection)
    if governing is None:
        return []
    body = (reflection.get("read") or {}).get(governing)
    if body is None:
        return [{"action": "read", "name": governing}]
    anchor = _anchor(body)
    if anchor is None:
        return []
    note = h.finish(f"{who} corrected this procedure: {sentence}")
    return [{"action": "patch", "name": governing, "old": anchor, "new": f"{anchor}\n- {note}", "reason": "a correction"}]


def _correction(inputs: TurnInputs) -> tuple[str, str] | None:
    for i in inputs.interactions:
        if i.get("sender_kind", "human") != "human":
            continue
        for sentence in sentences(i["body"]):
            if h.correction(sentence):
                return i["sender"], sentence
    return None


def _governing(inputs: TurnInputs, reflection: dict) -> str | None:
    from learning.procedures import jaccard

    best, best_score = None, 0.5
    for s in reflection.get("skills") or []:
        if s.get("pinned"):
            continue
        score = jaccard(inputs.tool_sequence, s.get("tool_sequence") or [])
        if score >= best_score:
            best, best_score = s["name"], score
    return best


def _anchor(body: str) -> str | None:
    """The procedure's last line: the place a correction is added, before what practice added."""
    from learning.skill_body import procedure_of

    lines = [line for line in procedure_of(body).splitlines() if line.strip()]
    return lines[-1] if lines else None
