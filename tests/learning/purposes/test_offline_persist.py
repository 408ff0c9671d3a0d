"""The offline PersistDecider on small made-up messages: each rule of ``learning.purposes.offline.heuristics`` holds.

Its quality on real messages is a bench's figure (``bench/offline_judgement.py``), not a test's.
"""

from __future__ import annotations

import pytest

from learning.purposes.persist_decision import Inputs, decide

TODAY = "2026-12-03"  # a Thursday


def decision(sender: str, text: str) -> dict:
    return decide(Inputs(interactions=[{"sender": sender, "body": text, "sender_kind": "human"}], today=TODAY))


@pytest.mark.parametrize("text", [
    # a request, a question, a reaction
    "Never mind.", "Please deploy the hotfix today.", "I like this.", "Can you check the logs today?",
    "I'm going to need to change my booking today.", "I just want to cancel the trip today.",
    "I'm hoping to get a refund this week.", "Today I'm feeling great!", "We love working with your team.",
    # an instruction, alone or riding on a statement
    "Always use the staging cluster.", "Don't merge before the tests pass.",
    "I'm out tomorrow, so ping Bo for reviews.", "Next month I'm moving to Oslo, so cancel my gym membership.",
    "I prefer economy class, and book it under my name.", "Remember to send the report.",
    "I'm flying to Lima next week but would like to upgrade.",
    "This week I'm working from home; send packages to my home address.",
    "Lena is in Tokyo this month, so don't book reviews before 9am her time.",
    # a note that needs the conversation: the person spoken to, "it", "that one"
    "I'm going to call you tomorrow.", "I prefer not to talk about it.", "I usually try to avoid that.",
    # what happened, a complaint, a shared plural, a liking of what the conversation shows
    "I was told I could get a refund today.", "I never got the confirmation email.", "I always get charged twice!",
    "I always look forward to our weekly calls.", "I love the photos.", "I went there on Monday.",
    "My user ID is Ana.",
])
def test_requests_reactions_and_instructions_are_not_notes(text):
    assert decision("Ana", text)["classification"] == "NOOP"


@pytest.mark.parametrize(("text", "content"), [
    ("I prefer short bullet-point status updates.", "Ana prefers short bullet-point status updates."),
    ("My timezone is CET.", "Ana's timezone is CET."),
    ("We use Terraform for all infrastructure.", "Ana's team uses Terraform for all infrastructure."),
    ("I love hiking trips with my family.", "Ana loves hiking trips with their family."),
    ("My email is ana@example.com.", "Ana's email is ana@example.com."),
    ("My manager is Mr. Jones.", "Ana's manager is Mr. Jones."),
    ("I live in St. Louis.", "Ana lives in St. Louis."),
    ("I prefer meetings before 10 a.m. on weekdays.", "Ana prefers meetings before 10 a.m. on weekdays."),
    ("I prefer flights when I travel with my kids.", "Ana prefers flights when they travel with their kids."),
    ("We love painting together lately.", "Ana and others love painting together lately."),
    ("We prefer squash merges on the payments repo.", "Ana's team prefers squash merges on the payments repo."),
    ("I'm allergic to peanuts and shellfish.", "Ana is allergic to peanuts and shellfish."),
    ("I don't like long layovers.", "Ana doesn't like long layovers."),
    ("I'm not a fan of early meetings.", "Ana is not a fan of early meetings."),
    ("I always pick the aisle seat.", "Ana always picks the aisle seat."),
    ("We never deploy on Fridays.", "Ana's team never deploys on Fridays."),
    ("My birthday is on June 5th.", "Ana's birthday is on June 5th."),
    ("Please remember I prefer window seats.", "Ana prefers window seats."),
    ("Oh, and please note that we never deploy on Fridays.", "Ana's team never deploys on Fridays."),
])
def test_a_stated_liking_habit_or_standing_fact_is_a_long_note(text, content):
    d = decision("Ana", text)
    assert (d["classification"], d["content"]) == ("LONG", content)


@pytest.mark.parametrize(("text", "content", "days"), [
    ("I'm on vacation until 2026-12-10.", "Ana is on vacation until 2026-12-10.", 8),
    ("I'm on vacation from June 10 to June 20.", "Ana is on vacation from June 10 to June 20 (ends 2027-06-20).", 90),
    ("I'm away from December 10 to December 20.", "Ana is away from December 10 to December 20 (ends 2026-12-20).", 18),
    ("I'm on call through Friday.", "Ana is on call through Friday (ends 2026-12-04).", 2),
    ("I'm flying to Boston next Tuesday for a wedding.",
     "Ana is flying to Boston next Tuesday for a wedding (ends 2026-12-08).", 6),
    ("The code freeze runs until the 14th.", "The code freeze runs until the 14th (ends 2026-12-14).", 12),
    ("I have a dentist appointment on Monday.", "Ana has a dentist appointment on Monday (ends 2026-12-07).", 5),
    ("I'm out of office this week.", "Ana is out of office this week (as of 2026-12-03).", 7),
    ("I'm busy today, talk later.", "Ana is busy today (as of 2026-12-03).", 1),
    ("We moved the release to next week.", "Ana's team moved the release to next week (as of 2026-12-03).", 14),
    ("We're going to the beach next weekend.",
     "Ana and others are going to the beach next weekend (as of 2026-12-03).", 10),
])
def test_a_dated_situation_is_a_short_note_kept_to_the_dates_end(text, content, days):
    d = decision("Ana", text)
    assert (d["classification"], d["content"], d["ttl_days"]) == ("SHORT", content, days)


def test_a_sender_named_by_a_handle_keeps_its_case():
    d = decision("ana_k_42", "I prefer economy class.")
    assert (d["classification"], d["content"]) == ("LONG", "ana_k_42 prefers economy class.")


def test_a_verb_after_and_continues_the_statement_it_is_no_instruction():
    assert decision("Ana", "I live in Oslo and love the fjords.")["classification"] == "LONG"
    assert decision("Ana", "I live in Oslo, so book the fjord trip.")["classification"] == "NOOP"
