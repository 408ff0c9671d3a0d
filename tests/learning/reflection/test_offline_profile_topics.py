"""Offline profile topics are real topics or nothing: a noun phrase whose head noun recurs in what the person said.

Real people's messages (tau-bench customers, LoCoMo speakers) are posted through the production
intake (``store_turn``) and reflected by the offline provider; the profiles the profiler wrote are read back.
"""

from __future__ import annotations

import re

import pytest

from core.words import stem
from learning.intake import turns
from learning.intake.record import TurnRecord
from learning.models import CounterpartyProfile
from learning.reflection import reflect_turn
from tests import dev_data
from tests.learning.reflection.conftest import human, record
from tests.learning.reflection.tau_turns import post_and_reflect

# words that are never a topic whatever the sentence: verbs, fillers and courtesies people open with
NEVER = frozenset("""want need like would could should get got make help thanks thank please sure hello hi hey
    change book cancel reproduce touch first against staging also really just know think going""".split())
LOCOMO_SESSIONS = 6  # per conversation: 12 sessions of two speakers


def sentences_of(messages: list[str]) -> list[set[str]]:
    return [{stem(w.removesuffix("'s")) for w in re.findall(r"[a-z0-9][a-z0-9_'-]*", s.lower())}
            for m in messages for s in re.split(r"(?<=[.!?])\s+|\n+", m) if s.strip()]


def check(profile: CounterpartyProfile, said: list[list[str]], name: str) -> None:
    """Each topic's head noun is in two sentences of one turn's messages; no topic word is a name or identifier."""
    names = {w.lower() for w in name.split()}
    for topic in profile.topics:
        words = topic.split()
        head = stem(words[-1])
        assert any(sum(head in s for s in sentences_of(messages)) >= 2 for messages in said), (profile.subject_handle, topic)
        assert not set(words) & (NEVER | names), (profile.subject_handle, topic)
        assert all(w.isalpha() or "-" in w for w in words), (profile.subject_handle, topic)
        for messages in said:  # a name: capitalised inside a sentence wherever the person wrote it
            for w in words:
                assert not re.search(rf"(?<![.!?]\s)(?<!^)\b{w.capitalize()}\b(?!')", " ".join(messages)) or \
                    re.search(rf"\b{w}\b", " ".join(messages)), (profile.subject_handle, topic)


@pytest.mark.django_db
def test_tau_bench_customers_get_recurring_nouns_or_nothing(seat):
    runs = [r for r in dev_data.tau_runs() if r["trial"] == 0]  # 25 customers, one conversation each
    post_and_reflect(runs, lambda run: seat)
    said: dict[str, list[list[str]]] = {}
    for run in runs:
        said.setdefault(run["info"]["task"]["user_id"], []).append(dev_data.tau_user_messages(run))
    profiles = list(CounterpartyProfile.objects.filter(observer=seat))
    assert len(profiles) == len(said)
    for profile in profiles:
        check(profile, said[profile.subject_handle], profile.display_name)
    with_topics = [p for p in profiles if p.topics]
    print("tau-bench customers with topics:", len(with_topics), "of", len(profiles),
          {p.subject_handle: p.topics for p in profiles})
    assert len(with_topics) >= len(profiles) * 0.6
    assert any(any(stem(t.split()[-1]) in ("flight", "reservation") for t in p.topics) for p in profiles)


@pytest.mark.django_db
def test_locomo_speakers_get_recurring_nouns_or_nothing(seat):
    said: dict[str, list[list[str]]] = {}
    for conv in dev_data.locomo():
        for n, session in enumerate(dev_data.locomo_sessions(conv["conversation"])[:LOCOMO_SESSIONS]):
            interactions = [human(t["text"], handle=t["speaker"].lower(), name=t["speaker"]) for t in session if t.get("text")]
            for speaker in {t["speaker"] for t in session}:
                said.setdefault(speaker.lower(), []).append([t["text"] for t in session if t["speaker"] == speaker])
            fields = record(seat, run_id=f"locomo-{conv['sample_id']}-{n}", interactions=interactions,
                            conversation_id=f"chat:{conv['sample_id']}", tool_sequence=[], tools_called=[], replied=True)
            turn, _ = turns.store_turn(seat=seat, record=TurnRecord.model_validate(fields))
            reflect_turn(turn.pk)
    profiles = list(CounterpartyProfile.objects.filter(observer=seat))
    assert len(profiles) == len(said) == 4
    for profile in profiles:
        check(profile, said[profile.subject_handle], profile.display_name)
        assert profile.topics, profile.subject_handle  # a dozen long sessions always recur on something
    print("LoCoMo speakers' topics:", {p.subject_handle: p.topics for p in profiles})


@pytest.mark.django_db
def test_the_issues_example_message_gives_no_topics(make_turn, seat):
    turn = make_turn(interactions=[human("Can you reproduce this against staging first? Don't touch the production queue.")])
    reflect_turn(turn.pk)
    assert CounterpartyProfile.objects.get(observer=seat).topics == []


@pytest.mark.django_db
def test_an_acronym_qualifies_a_topic_but_a_code_alone_is_none(make_turn, seat):
    """"the LGBTQ community" is a topic with its acronym; "from EWR" (an airport) and "my user ID" name a code."""
    turn = make_turn(interactions=[human(
        "I usually fly out of EWR on Mondays. The lines at EWR are long. My user ID is ana_li_1. Is my user ID on file? "
        "The LGBTQ community here means a lot to me. I met the LGBTQ community at the parade. "
        "I need an update on my refund. Any update on the refund would help.")])
    reflect_turn(turn.pk)
    topics = CounterpartyProfile.objects.get(observer=seat).topics
    assert "lgbtq community" in topics and "refund" in topics
    assert not {"ewr", "user", "update"} & {w for t in topics for w in t.split()}, topics
