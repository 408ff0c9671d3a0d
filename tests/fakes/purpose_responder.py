"""A fake server's responder that answers each purpose's probe request with its ideal corpus answer.

The purpose is recognised by the system prompt it renders for its probe inputs, as a real model
would see it; anything else is answered "ok".
"""

from __future__ import annotations

PREFIX = 200  # characters of the system prompt that tell the purposes apart


def ideal_answers():
    from core import purposes
    from learning.purposes.probe import PROBE_INPUTS
    from tests.learning.purposes.corpus import IDEAL

    by_prompt = {
        purposes.get(name).render(purposes.get(name).read_inputs(PROBE_INPUTS[name]))[0]["content"][:PREFIX]: text
        for name, text in IDEAL.items()
    }
    assert len(by_prompt) == len(IDEAL), "two purposes render the same system prompt prefix"

    def respond(body: dict) -> str:
        system = next((m["content"] for m in body.get("messages", []) if m.get("role") == "system"), body.get("system", ""))
        return by_prompt.get(str(system)[:PREFIX], "ok")

    return respond
