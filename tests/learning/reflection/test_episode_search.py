"""Hybrid episode search (a ranking by meaning fused with a ranking by words): turns written by a real
reflection, searched through ``query_episodes``, with the packaged sentence model."""

from __future__ import annotations

import functools

import pytest

from core.providers.embeddings import embed_one
from core.words import search_words
from learning import tools
from learning.memory import episode_search, episodes
from learning.models import Episode, EpisodePiece
from learning.passes.embed_fill import run_fill
from learning.prefetch import PrefetchRequest, prefetch
from learning.reflection.tasks import reflect_turn
from tests.factories import SeatFactory
from tests.learning.reflection.conftest import human

pytestmark = pytest.mark.real_model

OTHER_TURNS = [
    "Can you summarise yesterday's incident review for the leadership channel?",
    "Please rotate the staging database credentials before Friday.",
    "The checkout page is slow on mobile, any idea why?",
    "Who owns the billing export job these days?",
    "Draft a reply to the customer asking about the refund for order 5521.",
    "What's our policy on deleting user data after account closure?",
    "The customer wants a refund for the duplicate charge.",
    "Is the refund for the cancelled subscription processed yet?",
]



@pytest.fixture
def call(seat):
    def _call(tool_name, /, **arguments):
        return tools.run(seat=seat, name=tool_name, run_id="run-search", arguments=arguments)

    return _call


def reflect(make_turn, seat, body, sender="maya", name="Maya", did="Replied in the thread."):
    turn = make_turn(seat, interactions=[human(body, handle=sender, name=name)], plan_summary=did)
    reflect_turn(turn.pk)
    run_fill(seat=seat)  # a turn whose embed ran past its budget on a busy machine is filled, lines too
    return Episode.objects.get(run_id=turn.run_id)


def found(call, query, limit=3):
    return [h["turn_id"] for h in call("query_episodes", query=query, limit=limit).data["hits"]]


def words(text):
    return set(search_words(text))


def test_a_turn_sharing_only_a_rare_word_with_the_query_is_found(local_embedder, seat, make_turn, call):
    for body in OTHER_TURNS:
        reflect(make_turn, seat, body)
    target = reflect(make_turn, seat, "Mirela from Vantoro called about invoice 99812.")
    query = "Vantoro refund"  # by meaning the refund turns are nearer; only the name ties it to the target
    vector = embed_one(query, budget=None).vector
    by_vector_only = [i for i, _ in episode_search.ranked(seat=seat, vector=vector, model="all-MiniLM-L6-v2",
                                                           query="", limit=3).rows]
    assert target.pk not in by_vector_only  # the proof that the words, not the vector, found it
    assert target.run_id in found(call, query, limit=3)


def test_a_turn_sharing_no_word_with_the_query_is_found_by_meaning(local_embedder, seat, make_turn, call):
    for body in OTHER_TURNS:
        reflect(make_turn, seat, body)
    target = reflect(make_turn, seat, "The automobile engine is dead this morning, it makes a clicking noise.",
                     did="Suggested checking the battery terminals.")
    query = "my car won't start"
    assert not words(query) & words(episodes.text_of(target))  # nothing for the full-text half to match
    assert found(call, query, limit=1) == [target.run_id]


def test_the_sender_named_in_the_turn_is_searchable(local_embedder, seat, make_turn, call):
    reflect(make_turn, seat, "I moved to the Berlin office last month.", sender="oskar", name="Oskar")
    target = reflect(make_turn, seat, "I moved to the Lisbon office last month.", sender="ines", name="Ines")
    assert found(call, "Where does Ines work now?", limit=1) == [target.run_id]


def test_a_reply_is_not_searched_by_the_message_it_carried_as_context(local_embedder, seat, make_turn, call):
    for body in OTHER_TURNS:
        reflect(make_turn, seat, body)
    said = "The automobile engine is dead this morning, it makes a clicking noise."
    target = reflect(make_turn, seat, said, sender="ana", name="Ana")
    reply = make_turn(seat, interactions=[human(said, handle="ana", name="Ana"),  # the message it answers
                                          human("Sorry, I am in a meeting until noon.", handle="oskar", name="Oskar")])
    reflect_turn(reply.pk)
    run_fill(seat=seat)
    query = "my car won't start"
    assert not words(query) & words(said)  # by meaning alone: the reply holds the whole message too
    assert found(call, query, limit=1) == [target.run_id]  # the turn that message woke, not the later reply
    assert reply.run_id in found(call, query, limit=3)  # still near by its whole text


def test_search_reads_only_the_seats_own_turns_of_the_querys_model(local_embedder, seat, make_turn, call):
    other_seat = SeatFactory(company=seat.company, role=seat.role, unit=seat.unit)
    theirs = reflect(make_turn, other_seat, "Ticket QZX-4471 is about the payroll export.")
    stale = reflect(make_turn, seat, "Ticket QZX-4471 is about the payroll export, again.")
    mine = reflect(make_turn, seat, "Lunch order for the offsite: pizza for twelve.")
    Episode.objects.filter(pk=stale.pk).update(embedding_model="an-older-model")  # as if the company moved models
    EpisodePiece.objects.filter(episode=stale).update(embedding_model="an-older-model")
    hits = found(call, "QZX-4471 payroll export", limit=5)
    assert theirs.run_id not in hits and stale.run_id not in hits
    assert hits == [mine.run_id]  # only the seat's own row of the query's model is within reach
    assert call("query_episodes", query="QZX-4471 payroll export").data["unreachable"] == 1


def test_an_edited_turn_is_searched_by_its_new_words(local_embedder, seat, make_turn, call):
    target = reflect(make_turn, seat, "Please check ticket QZX-4471.")
    Episode.objects.filter(pk=target.pk).update(plan_summary="Closed as duplicate of QZX-9000.")
    assert found(call, "QZX-9000", limit=1) == [target.run_id]
    Episode.objects.filter(pk=target.pk).delete()
    assert found(call, "QZX-9000", limit=1) == []


def test_deleted_turns_take_their_pieces_with_them_in_one_statement(local_embedder, seat, make_turn):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    kept = reflect(make_turn, seat, "Please rotate the staging database credentials before Friday.")
    gone = [reflect(make_turn, seat, body) for body in OTHER_TURNS[:3]]
    assert all(EpisodePiece.objects.filter(episode=e).exists() for e in [kept, *gone])
    with CaptureQueriesContext(connection) as sent:  # the database deletes the pieces; no episode is loaded first
        assert Episode.objects.filter(pk__in=[e.pk for e in gone]).delete()[0] == len(gone)
    assert [q["sql"].split()[0] for q in sent.captured_queries] == ["DELETE"]
    assert not EpisodePiece.objects.filter(episode_id__in=[e.pk for e in gone]).exists()
    assert EpisodePiece.objects.filter(episode=kept).exists()
    seat.delete()  # a seat's deletion reaches its turns' pieces too
    assert not EpisodePiece.objects.filter(episode_id=kept.pk).exists()


CLOSE_CALL = "about equally well"


def test_an_ask_that_singles_out_no_past_turn_is_said_to_be_a_close_call(local_embedder, seat, make_turn):
    for n in range(6):
        reflect(make_turn, seat, f"Please move my flight booking to another day, ticket {n}.")
    reflect(make_turn, seat, "Please add a checked bag for Ilse to reservation KX7QPL.")
    call = functools.partial(tools.run, seat=seat, name="query_episodes", run_id="run-search")

    flat = call(arguments={"query": "I need to move my flight booking."})
    assert flat.data["close_call"] is True and flat.data["hits"]
    assert CLOSE_CALL in flat.text and "call query_episodes with them" in flat.text
    clear = call(arguments={"query": "Add a bag for Ilse on KX7QPL"})
    assert clear.data["close_call"] is False and CLOSE_CALL not in clear.text

    def similar_work(ask, run_id):  # the turn start's block, from the same recall
        result = prefetch(seat=seat, request=PrefetchRequest(run_id=run_id, ask=ask))
        return next(b for b in result["blocks"] if b["name"] == "similar_prior_work")["text"]

    assert CLOSE_CALL in similar_work("I need to move my flight booking.", "start-generic")
    assert CLOSE_CALL not in similar_work("Add a bag for Ilse on KX7QPL", "start-specific")


def test_a_close_call_is_a_flat_top_of_at_least_five_rows():
    assert episode_search.close_call([0.9, 0.85, 0.8, 0.75, 0.71])  # the fifth within 0.2 of the first
    assert not episode_search.close_call([0.9, 0.85, 0.8, 0.75, 0.70])  # 0.2 apart: the best stands out
    assert not episode_search.close_call([0.9, 0.9, 0.9, 0.9])  # four rows: nothing to judge it by
    assert not episode_search.close_call([])


