"""The closed turn loop, driven through HTTP exactly as a runtime drives it.

prefetch -> the model's tool calls -> ``POST /turns``, keyed by the run id alone: the record carries
no field the runtime could not know (no skill ids: the prefetch offered those), and reflection,
run by the queue, counts the offered skills and refines the one the turn used.
"""

import pytest

from core import events
from learning import skill_body
from learning.events import ReflectionCompleted
from learning.memory import skills
from learning.models import SynthesizedSkill
from tests.factories import token_for

RELEASE_TOOLS = ["jira_get_issue", "git_checkout", "git_create_branch", "run_tests", "jira_transition"]


@pytest.fixture
def sync_queue(monkeypatch):
    from django_q.conf import Conf

    monkeypatch.setattr(Conf, "SYNC", True)


def learned(seat, name, description):
    """A skill as the synthesizer writes it (the production writer)."""
    return skills.create(
        seat=seat, name=name, description=description, trigger="inline", tool_sequence=RELEASE_TOOLS,
        body=skill_body.skill_md(name=name, description=description, body="# Steps\n1. Call `git_checkout`."),
    )


class Runtime:
    """What an agent runtime holds: its seat's token and handle, and the run id it made up."""

    def __init__(self, api_client, seat):
        self.api, self.seat, self.token = api_client, seat, token_for(seat)

    def post(self, path, body):
        response = self.api.post(path, body, token=self.token)
        assert response.status_code in (200, 202), response.content
        return response.json()

    def prefetch(self, run_id, trigger):
        return self.post(f"/api/v1/agents/{self.seat.handle}/prefetch", {"run_id": run_id, **trigger})

    def tool(self, run_id, tool, **arguments):
        return self.post(f"/api/v1/agents/{self.seat.handle}/tools/{tool}", {"run_id": run_id, "arguments": arguments})

    def turn_completed(self, record):
        return self.post("/api/v1/turns", {"seat": self.seat.handle, **record})


def test_prefetch_tools_and_turn_close_the_loop_skill_use_counts_and_the_refiner_appends(
    seat, api_client, sync_queue, django_capture_on_commit_callbacks
):
    release = learned(seat, "cut-release-branch", "Cut a release branch for a tracker ticket")
    notes = learned(seat, "write-release-notes", "Draft release notes from merged tickets")
    runtime = Runtime(api_client, seat)
    trigger = {
        "conversation_id": "jira:PLAT-7", "conversation_kind": "tracker",
        "label": "PLAT-7: Cut the 4.2 release", "subject_is_label": False,
        "interactions": [{"sender": {"handle": "ravi", "display_name": "Ravi", "platform": "jira"},
                          "body": "Please cut the release branch for 4.2 today."}],
    }

    start = runtime.prefetch("run-plat-7", trigger)
    assert "cut-release-branch" in start["prompt"]
    assert set(start["skills_offered"]) == {release.pk, notes.pk}
    assert start["ask"] == "PLAT-7: Cut the 4.2 release\nPlease cut the release branch for 4.2 today."

    loaded = runtime.tool("run-plat-7", "use_skill", name="cut-release-branch")
    assert loaded["ok"] and "git_checkout" in loaded["text"]
    # the runtime's own tools (jira, git) ran in the runtime; then the turn is reported, keyed by run id
    tools = [*RELEASE_TOOLS, "post_release_notes"]
    with django_capture_on_commit_callbacks(execute=True):
        accepted = runtime.turn_completed({
            "run_id": "run-plat-7", **trigger,
            "plan_summary": "Cut release/4.2, ran the tests and moved PLAT-7 to Done.",
            "tool_sequence": tools, "tools_called": ["use_skill", *tools], "review_outcome": "done", "replied": True,
        })
    assert accepted["status"] == "accepted"

    reflection = events.rows(ReflectionCompleted, seat=seat).first().payload
    assert reflection["gate"] is None
    # the loaded skill was counted by use_skill; SkillUse counts the one offered and not loaded
    assert reflection["workers"]["skill_use"] == {"status": "ran", "result": {"marked": 1}}
    notes.refresh_from_db()
    assert notes.use_count == 1  # offered, not loaded: counted by SkillUse alone
    release.refresh_from_db()
    assert release.use_count == 1  # loaded once: counted once
    assert release.version == 2 and reflection["workers"]["refiner"]["result"]["name"] == "cut-release-branch"
    assert release.body.rstrip().endswith(
        "- Observed in practice: the run also needed `post_release_notes` after `jira_transition`.")
    assert SynthesizedSkill.objects.get(pk=release.pk).state == SynthesizedSkill.ACTIVE
