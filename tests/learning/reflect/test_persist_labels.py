"""The offline PersistDecider against real messages from the dev data, labelled by hand
(``data/persist_labels.tsv``: references only; the text is read from the bench data, ``tests/dev_data.py``).

No request or instruction is ever stored; what is stored as LONG or SHORT is what the label says
at least 90% of the time; and enough is stored that the precision is not of an empty set.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from learning.purposes.persist_decision import decide
from tests import dev_data

LABELS = Path(__file__).with_name("data") / "persist_labels.tsv"
MIN_PRECISION = 0.9
MIN_STORED = {"LONG": 10, "SHORT": 4}  # so that a precision is measured over something


def messages() -> dict[str, tuple[str, str]]:
    """reference -> (sender, text), for every LoCoMo dialog turn and every tau-bench user message."""
    out = {}
    for conv in dev_data.locomo():
        for session in dev_data.locomo_sessions(conv["conversation"]):
            for t in session:
                out[f"locomo:{conv['sample_id']}:{t['dia_id']}"] = (t["speaker"], t["text"])
    for run in dev_data.tau_runs():
        for i, text in enumerate(dev_data.tau_user_messages(run)):
            out[f"tau:{run['task_id']}:{run['trial']}:{i}"] = (run["info"]["task"]["user_id"], text)
    return out


def labelled() -> list[tuple[str, str]]:
    rows = [line.split("\t") for line in LABELS.read_text().splitlines() if line and not line.startswith("#")]
    return [(ref, label) for ref, label in rows]


def decision(sender: str, text: str) -> dict:
    return decide({"interactions": [{"sender": sender, "body": text, "sender_kind": "human"}], "today": "2026-12-03"})


@pytest.fixture(scope="module")
def outcomes():
    texts = messages()
    return [(ref, label, decision(*texts[ref])) for ref, label in labelled()]


def test_the_labelled_set_holds_at_least_150_real_messages(outcomes):
    assert len(outcomes) >= 150 and len({ref for ref, _, _ in outcomes}) == len(outcomes)


def test_no_request_or_instruction_is_ever_stored(outcomes):
    stored = [(ref, d["content"]) for ref, label, d in outcomes
              if label in ("NOOP:request", "NOOP:instruction") and d["classification"] != "NOOP"]
    assert stored == []


def test_long_and_short_precision(outcomes):
    predicted = Counter(d["classification"] for _, _, d in outcomes)
    right = Counter(d["classification"] for _, label, d in outcomes if d["classification"] == label)
    report = {k: f"{right[k]}/{predicted[k]}" for k in ("LONG", "SHORT", "DOC")}
    print("offline PersistDecider precision per class:", report)
    for kind, least in MIN_STORED.items():
        assert predicted[kind] >= least, report
        assert right[kind] / predicted[kind] >= MIN_PRECISION, (report, [
            (ref, label, d["content"]) for ref, label, d in outcomes if d["classification"] == kind and label != kind])
    assert predicted["DOC"] == 0  # nothing in this set describes a team-wide practice


@pytest.mark.parametrize("text", ["Never mind.", "Please deploy the hotfix today.", "I like this.",
                                  "Always use the staging cluster.", "Can you check the logs today?",
                                  "Wow, that photo's amazing! I love all the yellow leaves, it looks so cozy.",
                                  "I love the self-acceptance and love theme.",
                                  "Your help means a lot. I'll keep plugging away and stay optimistic.",
                                  "My user ID is Ana.",
                                  "I'm going to need to change my flight today.", "I'm trying to book a flight for next month.",
                                  "I just want to cancel the trip today.", "I'm hoping to get a refund this week.",
                                  "I'm calling because my flight was cancelled today.", "Today I'm feeling great!",
                                  "I hate to say it, but the flight was terrible.", "We love working with your team.",
                                  # a note needing the conversation to be understood: the person spoken to, "it"
                                  "I'm going to call you tomorrow.", "I'll send you the pictures tomorrow.",
                                  "I'm going to try it next week.", "I prefer not to talk about it.",
                                  # what happened, and a choice among what the conversation offered
                                  "I was told I could get a refund today.", "I'm okay with the earlier flight tomorrow.",
                                  # a habit that is a complaint, a past, a family's "we", the listener's "our", "that"
                                  "I always get charged twice!", "I never got the confirmation email.",
                                  "We always look forward to our family camping trip.",
                                  "I always look forward to our chats.", "I usually try to avoid that.",
                                  # what the sender is or has, only as a standing fact
                                  "I'm a bit confused.", "I'm a manager here, let me speak to someone.",
                                  "I have a question about my booking.", "I have one child traveling with me.",
                                  "I don't have any nuts with me.", "I don't like the new design.",
                                  "I went there on Monday.",
                                  # a request or an instruction riding on a statement, and one to remember a task
                                  "I'm traveling with my wife next month and need to add her to the booking.",
                                  "Next month I'm moving to Seattle, so cancel my gym membership.",
                                  "I prefer economy class, and book it under my name.", "Remember to send the report.",
                                  "I'm out tomorrow, so ping Bo for reviews.",
                                  "I'm flying to Boston next week but would like to upgrade.",
                                  "I'm leaving tomorrow, hoping to get an upgrade.",
                                  "We're flying out tomorrow and want the refund on my card.",
                                  "This week I'm working from home; send packages to my home address.",
                                  # someone close to the sender: a state of the moment, a shared or held object
                                  "My wife is upset.", "My son is traveling with me.", "My wife loves our garden.",
                                  "My wife loves the photos.", "My mom loves my paintings.", "My husband is a vet here.",
                                  "My kids are so excited about summer break!",
                                  "My mom is really sick and I need to get home sooner.",
                                  # a value said of a thing the conversation shows, of the listener, or of a wish
                                  "This is my favorite!", "That means a lot to me.", "Your support means a lot to me.",
                                  "Stuff like this mural is really special to me.", "Is pottery your favorite?",
                                  "Getting a refund is important to me.",
                                  "Being on time is important to me, please book the earlier flight."])
def test_requests_reactions_and_instructions_are_not_notes(text):
    assert decision("Ana", text)["classification"] == "NOOP"


@pytest.mark.parametrize(("text", "kind", "content"), [
    ("I prefer short bullet-point status updates.", "LONG", "Ana prefers short bullet-point status updates."),
    ("My timezone is CET.", "LONG", "Ana's timezone is CET."),
    ("We use Terraform for all infrastructure.", "LONG", "Ana's team uses Terraform for all infrastructure."),
    ("I'm on vacation until 2026-12-10.", "SHORT", "Ana is on vacation until 2026-12-10."),
    ("I'm away until 2026-12-10.", "SHORT", "Ana is away until 2026-12-10."),
    ("I'm having surgery next week, so I can't travel.", "SHORT",
     "Ana is having surgery next week, so they can't travel (as of 2026-12-03)."),
    ("I love camping trips with my family.", "LONG", "Ana loves camping trips with their family."),
    ("I prefer the aisle seat on long flights.", "LONG", "Ana prefers the aisle seat on long flights."),
    ("My user ID is ana_li_3668.", "LONG", "Ana's user ID is ana_li_3668."),
    ("My email is ana@example.com.", "LONG", "Ana's email is ana@example.com."),
    ("We use Node.js for the build.", "LONG", "Ana's team uses Node.js for the build."),
    ("My manager is Mr. Jones.", "LONG", "Ana's manager is Mr. Jones."),
    ("I live in St. Louis.", "LONG", "Ana lives in St. Louis."),
    ("I prefer tea vs. coffee.", "LONG", "Ana prefers tea vs. coffee."),
    ("I love to hike on weekends.", "LONG", "Ana loves to hike on weekends."),
    ("We use AWS, e.g. S3 and EC2.", "LONG", "Ana's team uses AWS, e.g. S3 and EC2."),
    ("I prefer meetings before 10 a.m. on weekdays.", "LONG", "Ana prefers meetings before 10 a.m. on weekdays."),
    ("I live in the U.S. My manager is Bo.", "LONG", "Ana's manager is Bo."),
    # the verb agrees with the name; a later mention is "they"
    ("I have a big exam tomorrow.", "SHORT", "Ana has a big exam tomorrow (as of 2026-12-03)."),
    ("Tomorrow I fly to Denver for a conference.", "SHORT", "Tomorrow Ana flies to Denver for a conference (as of 2026-12-03)."),
    ("I don't have time this week.", "SHORT", "Ana doesn't have time this week (as of 2026-12-03)."),
    ("I prefer flights when I travel with my kids.", "LONG", "Ana prefers flights when they travel with their kids."),
    # "we" is the sender's team when the sentence names work, else the sender and others (family, friends)
    ("We're going to the beach next weekend.", "SHORT", "Ana and others are going to the beach next weekend (as of 2026-12-03)."),
    ("We love painting together lately.", "LONG", "Ana and others love painting together lately."),
    ("We don't like long layovers.", "LONG", "Ana and others don't like long layovers."),
    ("We prefer squash merges on the payments repo.", "LONG", "Ana's team prefers squash merges on the payments repo."),
    ("My wife and I are going to Rome next month.", "SHORT", "Ana's wife and Ana are going to Rome next month (as of 2026-12-03)."),
    ("We moved the release to next week.", "SHORT", "Ana's team moved the release to next week (as of 2026-12-03)."),
    # what the sender can't eat, and a few more standing facts
    ("I'm allergic to peanuts and shellfish.", "LONG", "Ana is allergic to peanuts and shellfish."),
    ("I'm a vegetarian.", "LONG", "Ana is vegetarian."),
    ("My birthday is on June 5th.", "LONG", "Ana's birthday is on June 5th."),
    ("My home airport is SFO.", "LONG", "Ana's home airport is SFO."),
    # a liking denied, a habit, what the sender is, has and never eats
    ("I don't like long layovers.", "LONG", "Ana doesn't like long layovers."),
    ("I'm not a fan of red-eye flights.", "LONG", "Ana is not a fan of red-eye flights."),
    ("I always pick the aisle seat.", "LONG", "Ana always picks the aisle seat."),
    ("I usually just book through the app.", "LONG", "Ana usually just books through the app."),
    ("I never ever fly red-eyes.", "LONG", "Ana never ever flies red-eyes."),
    ("We never deploy on Fridays.", "LONG", "Ana's team never deploys on Fridays."),
    ("I'm a gold member, so I should get a free bag.", "LONG", "Ana is a gold member."),
    ("I'm a software engineer at Acme.", "LONG", "Ana is a software engineer at Acme."),
    ("I have two kids and they love the beach.", "LONG", "Ana has two kids."),
    ("I can't eat gluten or dairy.", "LONG", "Ana can't eat gluten or dairy."),
    ("I don't eat meat.", "LONG", "Ana doesn't eat meat."),
    # a standing fact about someone close to the sender, in the sender's words
    ("My wife is allergic to peanuts.", "LONG", "Ana's wife is allergic to peanuts."),
    ("My son is vegetarian.", "LONG", "Ana's son is vegetarian."),
    ("My husband prefers the window seat.", "LONG", "Ana's husband prefers the window seat."),
    ("My mother lives in Boston.", "LONG", "Ana's mother lives in Boston."),
    ("My wife can't eat gluten.", "LONG", "Ana's wife can't eat gluten."),
    ("My wife is a nurse and she works nights.", "LONG", "Ana's wife is a nurse."),
    ("My dog is named Max.", "LONG", "Ana's dog is named Max."),
    # what the sender values, said of the thing
    ("Family's super important to me.", "LONG", "Family is super important to Ana."),
    ("Painting landscapes and still life is my favorite!", "LONG", "Painting landscapes and still life is Ana's favorite."),
    ("Bach and Mozart are my favorite composers.", "LONG", "Bach and Mozart are Ana's favorite composers."),
    ("My kids mean everything to me.", "LONG", "Ana's kids mean everything to them."),
    # a statement the sender asks to be kept is kept as the statement
    ("Can you remember that I prefer aisle seats?", "LONG", "Ana prefers aisle seats."),
    ("Please remember I prefer window seats.", "LONG", "Ana prefers window seats."),
    ("Oh, and please note that we never deploy on Fridays.", "LONG", "Ana's team never deploys on Fridays."),
    ("Please keep in mind I'm out of office next week.", "SHORT", "Ana is out of office next week (as of 2026-12-03)."),
    ("I'm busy today, talk later.", "SHORT", "Ana is busy today (as of 2026-12-03)."),  # the sign-off is no part of it
    # a day of the week named: kept to that day (said on Thursday 2026-12-03)
    ("I'm flying to Boston next Tuesday for a wedding.", "SHORT",
     "Ana is flying to Boston next Tuesday for a wedding (as of 2026-12-03)."),
])
def test_stated_facts_are_kept_as_declarative_notes(text, kind, content):
    d = decision("Ana", text)
    assert (d["classification"], d["content"]) == (kind, content)


@pytest.mark.parametrize(("text", "days"), [("I'm off on Friday.", 2), ("I have a dentist appointment on Monday.", 5),
                                           # "next Tuesday" on a Thursday: the coming one or the one after
                                           ("I'm flying to Boston next Tuesday for a wedding.", 13)])
def test_a_named_weekday_keeps_a_situation_until_that_day(text, days):
    d = decision("Ana", text)  # 2026-12-03 is a Thursday
    assert (d["classification"], d["ttl_days"]) == ("SHORT", days)


def test_a_sender_named_by_a_handle_keeps_its_case():
    d = decision("mia_li_3668", "I prefer economy class.")
    assert (d["classification"], d["content"]) == ("LONG", "mia_li_3668 prefers economy class.")
