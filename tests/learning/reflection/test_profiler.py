"""Profiler: one pass per distinct human sender, never the seat, nothing from internal triggers."""

import json

from core import events
from core.models import Event
from learning.events import CounterpartyProfileUpdated
from learning.models import CounterpartyProfile
from learning.reflection import reflect_turn
from learning.reflection.workers import profiler
from tests.learning.reflection.conftest import human


def test_one_pass_per_distinct_human_sender_grouped_in_order(seat, make_turn, scripted):
    turn = make_turn(
        interactions=[
            human("Can we move the upgrade to Thursday?", handle="tom", name="Tom"),
            human("Let's go with Thursday.", handle="maya", name="Maya"),
            human("Don't forget the runbook link.", handle="tom", name="Tom"),
            human("On it.", handle="ana", name="Ana", kind="agent"),
            human("[FIRING] memory 81%", handle="alertmanager", name="Alertmanager", kind="bot"),
        ]
    )
    reflect_turn(turn.pk)
    calls = [c for c in scripted.calls if c["purpose"] == "profile_update"]
    assert [(c["inputs"].subject, c["inputs"].messages) for c in calls] == [
        ("Tom", ["Can we move the upgrade to Thursday?", "Don't forget the runbook link."]),
        ("Maya", ["Let's go with Thursday."]),
    ]
    assert set(CounterpartyProfile.objects.values_list("subject_handle", flat=True)) == {"tom", "maya"}
    assert Event.objects.filter(name="counterparty_profile_updated").count() == 2


def test_the_seat_never_profiles_itself_even_as_a_human_sender(seat, make_turn, ctx_of):
    ctx = ctx_of(make_turn(interactions=[human("note to self", handle="ana", name="Ana")]))
    assert profiler.Profiler().applies(ctx) == "no_human_senders"


def test_nothing_is_profiled_from_a2a_or_internal_triggers(seat, make_turn, ctx_of):
    for kind in ("a2a", "internal", "cron", "schedule", "sandbox"):
        ctx = ctx_of(make_turn(conversation_kind=kind))
        assert profiler.Profiler().applies(ctx) == "internal_trigger", kind


def test_one_row_per_observer_subject_and_platform(seat, other_seat, make_turn):
    reflect_turn(make_turn().pk)
    reflect_turn(make_turn(interactions=[human("I'm worried about long threads.")]).pk)
    reflect_turn(make_turn(interactions=[human("Same person, other platform.", platform="jira")]).pk)
    reflect_turn(make_turn(other_seat).pk)
    mine = CounterpartyProfile.objects.filter(observer=seat, subject_handle="maya")
    assert mine.count() == 2
    assert mine.get(subject_platform="mattermost").observations == 2
    assert CounterpartyProfile.objects.filter(observer=other_seat).count() == 1  # per observer, never merged


def test_a_profile_keeps_style_decisions_sensitivities_and_topics(seat, make_turn):
    turn = make_turn(interactions=[human(
        "Let's go with the blue-green rollout. Please avoid Friday deploys, I'm worried about the rollout on weekends.")])
    reflect_turn(turn.pk)
    profile = CounterpartyProfile.objects.get()
    assert profile.communication_style.startswith("Writes")
    assert profile.past_decisions == ["Maya decided to go with the blue-green rollout."]
    assert not any("avoid" in s for s in profile.sensitivities)  # a request is no line of a profile
    assert profile.topics == ["blue-green rollout"]  # the one noun said twice, in its most specific wording
    payload = events.rows(CounterpartyProfileUpdated, seat=seat).first().payload
    assert payload["subject_handle"] == "maya" and payload["subject_platform"] == "mattermost"


def test_unsettled_turns_are_profiled_too(seat, make_turn):
    reflect_turn(make_turn(review_outcome="self_iterate").pk)
    assert CounterpartyProfile.objects.count() == 1


def test_an_external_sender_is_keyed_by_external_id(seat, make_turn):
    sender = {"handle": "", "external_id": "U0123", "platform": "slack", "display_name": "Kim", "kind": "human"}
    reflect_turn(make_turn(interactions=[{"sender": sender, "body": "Hello there", "at": None}]).pk)
    assert CounterpartyProfile.objects.get().subject_external_id == "U0123"


def test_a_senders_unparseable_answer_is_observed_offline_and_said_so(seat, make_turn, scripted):
    scripted.queue("profile_update", "Tom seems busy.")  # unparseable: Tom is observed by the offline floor
    turn = make_turn(
        interactions=[
            human("Can we move the upgrade to Thursday?", handle="tom", name="Tom"),
            human("Let's go with Thursday.", handle="maya", name="Maya"),
        ]
    )
    reflect_turn(turn.pk)
    assert set(CounterpartyProfile.objects.values_list("subject_handle", flat=True)) == {"tom", "maya"}
    spend = Event.objects.get(name="auxiliary_spend", payload__outcome="unparseable").payload
    assert (spend["provider"], spend["reason"]) == ("scripted", "no JSON object in the answer")
    outcome = Event.objects.get(name="reflection_completed").payload["workers"]["profiler"]
    assert outcome["status"] == "ran" and outcome["result"]["subjects"] == ["tom", "maya"]


def test_an_answer_that_adds_nothing_is_not_counted_as_an_observation(seat, make_turn, scripted):
    said = "I'm worried about the Friday deploys."
    added = {"communication_style": "", "past_decisions": [], "sensitivities": ["Maya is worried about Friday deploys."],
             "topics": ["deploys"]}
    scripted.queue("profile_update", json.dumps(added), json.dumps(added))
    reflect_turn(make_turn(interactions=[human(said)]).pk)
    reflect_turn(make_turn(interactions=[human(said)]).pk)
    profile = CounterpartyProfile.objects.get()
    assert profile.observations == 1 and profile.sensitivities == added["sensitivities"]
    assert Event.objects.filter(name="counterparty_profile_updated").count() == 1
    second = Event.objects.filter(name="reflection_completed").order_by("id").last().payload["workers"]["profiler"]
    assert second["result"]["unchanged"] == ["maya"] and second["result"]["answered_by"] == "scripted"
