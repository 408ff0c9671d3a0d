"""Offline skills drafted from the 100 tau-bench dev runs are named for the task class, never the greeting.

Every run is posted through the production intake (``store_turn``, as ``POST /turns`` stores it)
and reflected by the offline provider: one seat per task, so each seat sees its task four times.
"""

from __future__ import annotations

import re

import pytest

from learning.models import SynthesizedSkill
from learning.purposes.offline import task_class
from tests import dev_data
from tests.factories import SeatFactory
from tests.learning.reflection.tau_turns import post_and_reflect

GREETINGS_AND_COURTESIES = task_class.COURTESY | {"reaching", "help", "need", "like", "want", "gold", "member", "because"}


def drafted(company, role, unit):
    """Each run posted twice: to its task's own seat, and to one airline seat that serves every task."""
    runs = sorted(dev_data.tau_runs(), key=lambda r: (r["trial"], r["task_id"]))
    seats = {}

    def seat_of(key):
        if key not in seats:
            seats[key] = SeatFactory(company=company, role=role, unit=unit, handle=f"airline-{key}")
        return seats[key]

    post_and_reflect(runs, lambda run: seat_of(run["task_id"]))
    post_and_reflect(runs, lambda run: seat_of("desk"), run_prefix="desk")
    tools = {t for run in runs for r in dev_data.tau_tool_rounds(run) for t in r}
    return list(SynthesizedSkill.objects.order_by("seat__handle")), tools


@pytest.mark.django_db
def test_offline_skills_drafted_from_the_tau_bench_dev_runs(company, role, unit):
    """One pass over the data (the 100 runs through the intake and reflection, twice), three promises checked."""
    skills, tools = drafted(company, role, unit)
    named_for_the_task_class_from_tool_words_only(skills, tools)
    the_summary_the_steps_and_the_stored_run_agree(skills)
    when_to_use_is_what_was_asked_never_the_greeting(skills)
    desk = sorted(s.name for s in skills if s.seat.handle == "airline-desk")
    print("one seat for every task:", desk)
    assert len(desk) == len(set(desk)) >= 4  # one skill a class: a second run of a class is a collision, not a copy


def named_for_the_task_class_from_tool_words_only(skills, tools):
    names = sorted({s.name for s in skills})
    print(f"{len(skills)} skills drafted from the tau-bench dev runs:", names)
    for s in skills:
        print(" ", s.seat.handle, s.name, "|", s.description[:150], "|", s.body.split("## When to use\n")[1].split("\n")[0][:160])
    assert len([s for s in skills if s.seat.handle != "airline-desk"]) >= 15  # of 25 seats, one task each
    goals = set(task_class.GOAL_VERBS)  # "can you fix it?" names the work by the ask's goal and the tool's object
    assert {w for s in skills for w in s.name.split("-")} <= {w for t in tools for w in task_class.tool_words(t)} | goals
    for skill in skills:
        words = skill.name.split("-")
        assert not set(words) & GREETINGS_AND_COURTESIES, skill.name
        assert set(words) <= {w for t in skill.tool_sequence for w in task_class.tool_words(t)} | goals, skill.name
    assert {"update-reservation-flights", "book-reservation", "transfer-to-human-agents"} <= set(names)


def the_summary_the_steps_and_the_stored_run_agree(skills):
    for skill in skills:
        steps = re.findall(r"^\d+\. Call `([^`]+)`\.$", skill.body, re.M)
        count, listed = re.fullmatch(r".*: the (\d+)-step run of (.*)\.", skill.description).groups()
        assert int(count) == len(steps) and listed.split(", ") == steps, skill.name
        run = [t for i, t in enumerate(skill.tool_sequence) if i == 0 or skill.tool_sequence[i - 1] != t]
        assert steps == run, skill.name  # the stored run, a repeat in a row read once


def when_to_use_is_what_was_asked_never_the_greeting(skills):
    for skill in skills:
        when = skill.body.split("## When to use\n", 1)[1].split("\n", 1)[0]
        assert when.startswith(f"When asked to {skill.name.replace('-', ' ')}"), when
        example = when.split('as in: "', 1)[1] if 'as in: "' in when else ""
        first = example.split()[0].strip(",!.").lower() if example else ""
        assert first not in task_class.COURTESY, when
