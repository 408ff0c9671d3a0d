"""``skill_refinement``: one call, one bullet, at most one skill; NOOP is the expected answer.

The turn's whole offered catalogue goes into one prompt and the model picks which skill, if any,
learned something. The prefix (``Observed in practice:`` / ``Counter-example:``) is the code's,
chosen by the outcome.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from core.answers import Text
from core.purposes import AnswerUnparseable, Purpose, read_json, says_nothing, system_user
from learning.purposes.describe import TurnInputs, as_json, describe_turn

NAME = "skill_refinement"

SYSTEM = """You review one turn an agent has just finished, in which it was offered some of its own skills (procedures), and decide whether the turn taught one of those skills something new.

The turn is described by what woke it (the label of the waking event, which says what kind of event it was and nothing of what it said), what it was asked, and what it did (the review's account of what landed, or its final answer), with its outcome and the tools it called in order.

Answering NOOP is correct, and it is the expected answer for most turns: a skill that grows a line per turn stops being a procedure and becomes a diary of the turns that read it.

Only when the turn clearly shows something the procedure lacks, choose at most one skill and write one observation of one sentence: on a successful turn what practice showed that the steps do not say; on a failed turn the counter-example that the steps should warn about. Use a skill name exactly as listed. Never write about transient errors or environment trouble.

Again: if nothing new was learned, NOOP is the right answer, not a failure.

Answer with one JSON object and nothing else: {"noop": true} or {"skill": "exact skill name", "observation": "one sentence"}"""


class Inputs(TurnInputs):
    skills: list[dict[str, Any]] = []  # the offered skills: {"name", "description", "body", "tool_sequence"}


def render(inputs: Inputs) -> list[dict]:
    skills = "\n\n".join(
        f"### {s['name']}\n{s.get('description', '')}\n\n{s.get('body', '')}" for s in inputs.skills
    )
    user = f"Agent: {inputs.seat}\n{describe_turn(inputs)}\n\nThe skills it was offered:\n\n{skills}"
    return system_user(SYSTEM, user)


class Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    noop: bool = False
    skill: Text = ""
    observation: Text = ""


class Refinement(BaseModel):
    """The parsed answer: NOOP, or one observation on the skill it names (both given)."""

    model_config = ConfigDict(extra="forbid")

    noop: bool
    skill: str = ""
    observation: str = ""


def parse(text: str) -> Refinement:
    if says_nothing(text):
        return Refinement(noop=True)
    answer = read_json(NAME, text, Answer)
    if answer.noop or says_nothing(answer.skill) or not (answer.skill or answer.observation):
        return Refinement(noop=True)
    if not answer.skill or not answer.observation:
        raise AnswerUnparseable(NAME, "an answer that is not NOOP needs both skill and observation", text)
    return Refinement(noop=False, skill=answer.skill, observation=answer.observation)


def check(answer: Refinement, inputs: Inputs) -> str:
    """An observation is about a skill the turn was offered, by its listed name."""
    if answer.noop:
        return ""
    offered = [s.get("name", "") for s in inputs.skills]
    if answer.skill not in offered:
        return f"skill {answer.skill[:60]!r} is not one the turn was offered"
    return ""


def observe(inputs: Inputs) -> dict:
    """Offline: a step the run added to the best-matching skill, or a reviewer's failure; else NOOP."""
    from learning.procedures import jaccard, procedure

    tools = procedure(inputs.tool_sequence)  # a memory tool is never a step the skill lacked
    ranked = sorted(inputs.skills, key=lambda s: -jaccard(tools, s.get("tool_sequence") or []))
    if not ranked or not tools:
        return {"noop": True}
    skill = ranked[0]
    if jaccard(tools, skill.get("tool_sequence") or []) < 0.3:
        return {"noop": True}
    if inputs.outcome == "failed":
        if inputs.failure_set_by != "reviewer":
            return {"noop": True}  # a fired guard or a spent budget says nothing about the procedure
        reason = inputs.failure_reason or "the reviewer judged the result incomplete"
        return {"skill": skill["name"], "observation": f"a run that ended after `{tools[-1]}` failed review: {reason}."}
    known = set(procedure(skill.get("tool_sequence")))
    for i, tool in enumerate(tools):
        if tool not in known:
            after = f" after `{tools[i - 1]}`" if i else " first"
            return {"skill": skill["name"], "observation": f"the run also needed `{tool}`{after}."}
    return {"noop": True}


def offline(inputs: Inputs) -> str:
    answer = observe(inputs)
    return "NOOP" if answer.get("noop") else as_json(answer)


PURPOSE = Purpose(name=NAME, inputs=Inputs, render=render, parse=parse, offline=offline, max_tokens=400, json=True,
                  answer=Answer, echo_of=("woken_by", "asked", "what_it_did"), check=check)
