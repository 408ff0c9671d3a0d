"""The offline memory relevance filter selects by relevance to the ask, never by the word "prefer"."""

import json

from learning.purposes.memory_relevance_filter import PURPOSE as MEMORY_RELEVANCE_FILTER
from learning.purposes.memory_relevance_filter import Inputs


def selected(query, notes, triggered_by=()):
    candidates = [{"id": i, "kind": "diary_long", "written": "2026-12-01", "content": c} for i, c in enumerate(notes, 1)]
    answer = MEMORY_RELEVANCE_FILTER.offline(Inputs(query=query, candidates=candidates, max_selected=10,
                                                    triggered_by=list(triggered_by)))
    return json.loads(answer)["selected"]


def test_a_preference_of_someone_not_party_to_the_task_is_not_selected():
    notes = ["Ana prefers short bullet-point status updates.", "Bo prefers tickets over chat pings."]
    assert selected("Rotate the staging database credentials", notes, triggered_by=["Carol (slack)"]) == []


def test_a_preference_of_the_person_asking_is_selected():
    notes = ["Ana prefers short bullet-point status updates.", "Bo prefers tickets over chat pings."]
    assert selected("Give me the status of the export", notes, triggered_by=["Ana (slack)"]) == [1]


def test_a_note_on_the_tasks_subject_comes_first_then_standing_rules():
    notes = ["Always open a change ticket before a production deploy.",
             "The billing export runs at 02:00 UTC and writes to the finance bucket.",
             "Lunch orders go through the office channel."]
    assert selected("Why did the billing export fail last night?", notes) == [2, 1]


def test_a_note_about_a_sender_named_by_a_handle_is_about_that_person():
    """The offline PersistDecider writes a handle as it is ("mia_li_3668 prefers economy class.")."""
    from learning.purposes import persist_decision

    note = persist_decision.decide(persist_decision.Inputs(
        interactions=[{"sender": "mia_li_3668", "body": "I prefer economy class for my flights."}], today="2026-12-03",
    ))["content"]
    assert note == "mia_li_3668 prefers economy class for their flights."
    assert selected("Book economy class flights to Seattle", [note], triggered_by=["omar_rossi_1241 (web)"]) == []
    assert selected("Book economy class flights to Seattle", [note], triggered_by=["mia_li_3668 (web)"]) == [1]
