"""The example agent (official ``openai`` SDK tool calling + ``crewlet_client``) for three turns
against the live service, and ``make example``'s script run as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.models import Event
from examples.agent_loop.agent import run_turn
from examples.agent_loop.run import TURNS
from examples.agent_loop.scripted_model import ScriptedModel
from learning.models import DiaryEntry, Episode, SynthesizedSkill, Turn
from tests.factories import token_for

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def sync_queue(monkeypatch):
    from django_q.conf import Conf

    monkeypatch.setattr(Conf, "SYNC", True)


@pytest.mark.django_db(transaction=True)
def test_three_turns_prefetch_tools_turn_and_reflection_through_http(live_server, seat, sync_queue):
    import openai

    from crewlet_client import CrewletClient

    logs = []
    with ScriptedModel() as model, CrewletClient(live_server.url, token=token_for(seat), seat="ana") as crewlet:
        llm = openai.OpenAI(base_url=model.base_url, api_key="none", max_retries=0)
        for message in TURNS:
            logs.append(run_turn(llm=llm, model="scripted", crewlet=crewlet, message=message))
    assert [log.turn_status for log in logs] == ["accepted"] * 3
    assert Turn.objects.filter(reflected_at__isnull=False).count() == 3
    assert Episode.objects.filter(seat=seat).count() == 3
    for log in logs:  # the loop's iterations, one per reply that called tools, are what skill reflection counts
        posted = Turn.objects.get(run_id=log.run_id).payload
        assert posted["tool_iterations"] == log.tool_iterations and 1 <= log.tool_iterations <= len(log.tools_called)
    skill = SynthesizedSkill.objects.get(seat=seat)  # two runs of one procedure became a skill
    assert logs[2].offered_skills == [skill.name] and logs[2].tools_called[0] == "use_skill"
    assert "query_episodes" in logs[2].tools_called
    skill.refresh_from_db()
    assert skill.use_count >= 1  # the runtime never sent skills_offered: POST /turns took them from the run
    skill_use = Event.objects.get(name="reflection_completed", turn_id="example-3").payload["workers"]["skill_use"]
    assert skill_use["status"] == "ran", skill_use
    assert DiaryEntry.objects.get(seat=seat).content == "Dana wants the CI run linked in every status update."
    read = dict(logs[2].results)  # what the model read: the skill's steps and the earlier turns
    assert skill.name in read["use_skill"] and "Your turns most similar" in read["query_episodes"]
    assert "example-1" in read["query_episodes"] or "example-2" in read["query_episodes"]


def test_make_example_runs_with_no_key(tmp_path, empty_database):
    env = {k: v for k, v in os.environ.items() if k not in ("CREWLET_CONFIG", "OPENAI_API_KEY")}
    done = subprocess.run([sys.executable, "examples/agent_loop/run.py", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env=dict(env, DATABASE_URL=empty_database))
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert out.count("POST /turns:    accepted") == 3
    assert "tools called:   use_skill, query_episodes, reflect_and_persist" in out
    assert "notes: Dana wants the CI run linked in every status update." in out
