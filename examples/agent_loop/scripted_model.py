"""The example's model: a local OpenAI-compatible chat server (the suite's fake, real wire format)
whose answers follow a script: which tools to call at each step of each turn, then the answer.

The script reads the conversation the way a model would: the person's message picks the play,
the number of tool rounds so far picks the step, and a skill the system prompt offers is loaded
with ``use_skill`` before anything else.
"""

from __future__ import annotations

from examples.agent_loop.agent import offered_skills
from tests.fakes.http_fake import Answer
from tests.fakes.openai_server import FakeOpenAIServer

NO_LIMITS = {"conversation": None, "outcome_filter": None, "limit": 5}

FIX_CI = [  # the same procedure twice is a pattern: after the second run the Synthesizer drafts a skill
    ("query_episodes", {"query": "CI red flaky test", **NO_LIMITS}),
    ("read_ci_log", {"job": "{branch}/test"}),
    ("git_checkout", {"branch": "fix/{branch}-retry-timeout"}),
    ("apply_patch", {"summary": "raise the retry test's timeout to 60s"}),
    ("rerun_ci", {"job": "{branch}/test"}),
    ("post_message", {"text": "CI on {branch} is green again: the retry test's timeout was too tight."}),
]


def fix_ci(branch: str, answer: str) -> list:
    filled = [[(name, {k: v.format(branch=branch) if isinstance(v, str) else v for k, v in args.items()})]
              for name, args in FIX_CI]
    return [*filled, answer]


PLAYS = {
    "main is red": fix_ci("main", "Fixed: test_payments_retry timed out; raised its timeout and CI on main is green."),
    "release branch is red": fix_ci("release", "Release CI is green: the same retry timeout, same fix."),
    "nightly": [
        [("query_episodes", {"query": "CI red on nightly", **NO_LIMITS})],
        [("reflect_and_persist", {"content": "Dana wants the CI run linked in every status update.",
                                  "kind": "long", "ttl_days": None})],
        [("rerun_ci", {"job": "nightly/test"})],
        "Nightly is green after a rerun (CI run: nightly/test #812). Noted: I'll link the CI run every time.",
    ],
}


class ScriptedModel(FakeOpenAIServer):
    def chat_completion(self, body: dict, answer: Answer) -> dict:
        return super().chat_completion(body, self.decide(body["messages"]))

    def decide(self, messages: list[dict]) -> Answer:
        asked = next(m["content"] for m in reversed(messages) if m["role"] == "user")
        play = next(steps for key, steps in PLAYS.items() if key in asked.lower())
        rounds = sum(1 for m in messages if m["role"] == "assistant" and m.get("tool_calls"))
        skills = offered_skills(messages[0]["content"])
        if skills:  # an offered skill that fits is loaded first
            if rounds == 0:
                return Answer("", extra={"tool_calls": [("use_skill", {"name": skills[0]})]})
            rounds -= 1
        step = play[min(rounds, len(play) - 1)]
        return Answer(step) if isinstance(step, str) else Answer("", extra={"tool_calls": step})
