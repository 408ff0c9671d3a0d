"""Hybrid episode search (vector ranking fused with full-text ranking, in SQL): turns written by a real
reflection, searched through ``query_episodes`` on both engines, with the packaged sentence model."""

from __future__ import annotations

import functools

import pytest

from core.providers.embeddings import embed_one
from core.words import search_words
from learning import episode_search, episodes, tools
from learning.models import Episode, EpisodePiece
from learning.passes.embed_fill import run_fill
from learning.prefetch import PrefetchRequest, prefetch
from learning.tasks import reflect_turn
from tests import dev_data
from tests.factories import SeatFactory
from tests.learning.reflect.conftest import human
from tests.learning.reflect.tau_turns import post_and_reflect

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


def test_a_query_of_stopwords_to_postgresql_still_finds_the_turn_holding_its_words(local_embedder, seat, make_turn, call):
    for body in OTHER_TURNS:
        reflect(make_turn, seat, body)
    target = reflect(make_turn, seat, "Left the spare keys under the doormat after the late shift.")
    query = "under"  # a content word to the project, a stopword to PostgreSQL's english configuration
    assert words(query) == {"under"}
    assert found(call, query, limit=1) == [target.run_id]  # by its word: the only turn that holds it


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
    vector = embed_one("QZX-4471 payroll export", budget=None).vector  # the held places reach no farther
    assert set(episode_search.nearest_by_meaning(seat=seat, vector=vector, model="all-MiniLM-L6-v2", k=5)) <= {mine.pk}
    assert episode_search.nearest_by_meaning(seat=seat, vector=vector, model="all-MiniLM-L6-v2", k=5,
                                             outcome="failed") == []
    assert call("query_episodes", query="QZX-4471 payroll export").data["unreachable"] == 1


def test_an_edited_turn_is_searched_by_its_new_words(local_embedder, seat, make_turn, call):
    target = reflect(make_turn, seat, "Please check ticket QZX-4471.")
    Episode.objects.filter(pk=target.pk).update(plan_summary="Closed as duplicate of QZX-9000.")
    assert found(call, "QZX-9000", limit=1) == [target.run_id]
    Episode.objects.filter(pk=target.pk).delete()
    assert found(call, "QZX-9000", limit=1) == []


@pytest.mark.django_db(transaction=True)
def test_the_migration_indexes_turns_stored_before_it_and_the_fill_recomputes_their_pieces(
        local_embedder, seat, make_turn, call):
    from django.core.management import call_command
    from django.db.migrations.loader import MigrationLoader

    graph = MigrationLoader(None, ignore_no_migrations=True).graph
    name = next(n for a, n in graph.leaf_nodes() if a == "learning")
    node = graph.node_map[("learning", "0010_episode_fts_per_seat")]
    before = next(p for p in node.parents if p.key[0] == "learning").key
    call_command("migrate", *before, verbosity=0)
    try:
        for body in OTHER_TURNS:
            reflect(make_turn, seat, body)
        target = reflect(make_turn, seat, "Mirela from Vantoro called about invoice 99812.")
    finally:
        call_command("migrate", "learning", name, verbosity=0)
    assert EpisodePiece.objects.count() == 0  # dropped: the pieces' rule changed, the fill recomputes them
    vector = embed_one("Vantoro refund", budget=None).vector
    assert target.pk not in [i for i, _ in episode_search.ranked(seat=seat, vector=vector, model="all-MiniLM-L6-v2",
                                                                  query="", limit=3).rows]
    assert target.run_id in found(call, "Vantoro refund", limit=3)  # by its words: the rebuilt index holds old rows
    run_fill(seat=seat)
    assert [p.ordinal for p in EpisodePiece.objects.filter(episode=target)] == [0]  # its ask's one line


@pytest.mark.django_db(transaction=True)
def test_the_pieces_migration_drops_line_vectors_of_the_old_rule_and_the_fill_writes_the_new_ones(
        local_embedder, seat, make_turn, call):
    from django.core.management import call_command
    from django.db.migrations.loader import MigrationLoader

    said = "The automobile engine is dead this morning, it makes a clicking noise."
    graph = MigrationLoader(None, ignore_no_migrations=True).graph
    name = next(n for a, n in graph.leaf_nodes() if a == "learning")
    call_command("migrate", "learning", "0012_episode_newest_first", verbosity=0)
    try:
        reply = make_turn(seat, interactions=[human(said, handle="ana", name="Ana"),
                                              human("Sorry, I am in a meeting until noon.", handle="oskar", name="Oskar")])
        reflect_turn(reply.pk)
        episode = Episode.objects.get(run_id=reply.run_id)
        stale = embed_one(f"Ana: {said}", budget=None).vector  # the old rule: the context's line was a piece too
        EpisodePiece.objects.create(episode=episode, ordinal=9, embedding=stale, embedding_model="all-MiniLM-L6-v2",
                                    embedding_dim=len(stale))
    finally:
        call_command("migrate", "learning", name, verbosity=0)
    assert not EpisodePiece.objects.filter(episode=episode).exists()  # derived data, dropped
    run_fill(seat=seat)
    assert list(EpisodePiece.objects.filter(episode=episode).values_list("ordinal", flat=True)) == [0]  # Oskar's line


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


def test_an_ask_that_singles_out_no_past_turn_is_said_to_be_a_close_call(local_embedder, seat):
    """Trials 0-2 of twelve tau-bench dev tasks, posted and reflected (most change a booked flight, each its own
    way); asked with two 4th-trial openings: a generic one (task 20's) and one naming its reservation and passenger
    (task 10's)."""
    tasks = {4, 6, 7, 8, 10, 13, 14, 19, 20, 21, 23, 24}
    runs = sorted((r for r in dev_data.tau_runs() if r["trial"] < 3 and r["task_id"] in tasks),
                  key=lambda r: (r["trial"], r["task_id"]))
    post_and_reflect(runs, lambda run: seat)
    run_fill(seat=seat)
    call = functools.partial(tools.run, seat=seat, name="query_episodes", run_id="run-search")
    generic = "Hi there! I need some assistance with changing my flight booking."
    specific = "Hi, I need to remove Ethan from my reservation with code H9ZU1C. Can you help with that?"

    flat = call(arguments={"query": generic})
    assert flat.data["close_call"] is True and flat.data["hits"]
    assert CLOSE_CALL in flat.text and "call query_episodes with them" in flat.text
    clear = call(arguments={"query": specific})
    assert clear.data["close_call"] is False and CLOSE_CALL not in clear.text
    assert clear.data["hits"][0]["turn_id"].startswith("tau-10-")  # the task that removes Ethan from H9ZU1C

    def similar_work(ask, run_id):  # the turn start's block, from the same recall
        result = prefetch(seat=seat, request=PrefetchRequest(run_id=run_id, ask=ask))
        return next(b for b in result["blocks"] if b["name"] == "similar_prior_work")["text"]

    assert CLOSE_CALL in similar_work(generic, "start-generic")
    assert CLOSE_CALL not in similar_work(specific, "start-specific")


def test_a_close_call_is_a_flat_top_of_at_least_five_rows():
    assert episode_search.close_call([0.9, 0.85, 0.8, 0.75, 0.71])  # the fifth within 0.2 of the first
    assert not episode_search.close_call([0.9, 0.85, 0.8, 0.75, 0.70])  # 0.2 apart: the best stands out
    assert not episode_search.close_call([0.9, 0.9, 0.9, 0.9])  # four rows: nothing to judge it by
    assert not episode_search.close_call([])


WORD_TURNS = [  # each shares a word of the question, none is about undoing a release
    "The deploy train leaves at three today.",
    "I'll be back on Monday after the offsite.",
    "Bad weather delayed the team lunch.",
    "Roll call for the standup is at nine.",
    "The deploy dashboard shows the queue depth.",
    "Back up your laptop before the upgrade.",
    "That was a bad call by the referee.",
    "Who approves the deploy calendar for December?",
]
BUDGET = ("Quarterly numbers are due Friday: revenue by region, churn by plan, the hiring plan for the platform and "
          "data teams, the office move budget with the furniture quote, the travel budget for the offsite, the "
          "conference sponsorships, the contractor renewals and the licences we can cut before the renewal date.")


def test_the_turn_nearest_by_meaning_keeps_one_place_in_five_however_the_words_rank(local_embedder, seat, make_turn, call,
                                                                                   monkeypatch):
    """The answer to "How do I roll back a bad deploy?" says "revert a broken release": no word of the question.
    Its own line is the nearest by meaning of all the seat's turns, but its pooled vector also carries the long
    message it answered and falls out of the vector half's pool, and the turns that share the question's words
    fill the fused ranking (as LoCoMo's "national park or a theme park?" is answered by a camping trip). The
    answer is held the last of five places. A pool of five rows a half stands for a seat of thousands of turns."""
    from core import hybrid

    monkeypatch.setattr(hybrid, "SHORTLIST", 5)
    for body in OTHER_TURNS + WORD_TURNS:
        reflect(make_turn, seat, body)
    answer = human("To revert a broken release, run deployctl undo with the previous build id.", handle="maya",
                   name="Maya")
    turn = make_turn(seat, interactions=[human(BUDGET, handle="ravi", name="Ravi"), answer],
                     plan_summary="Replied in the thread.")
    reflect_turn(turn.pk)
    run_fill(seat=seat)
    target = Episode.objects.get(run_id=turn.run_id)
    query = "How do I roll back a bad deploy?"
    vector = embed_one(query, budget=None).vector
    model = "all-MiniLM-L6-v2"
    fused = [i for i, _ in episode_search.ranked(seat=seat, vector=vector, model=model, query=query, limit=5).rows]
    assert target.pk not in fused  # the words and the pooled vectors alone leave it out
    assert episode_search.nearest_by_meaning(seat=seat, vector=vector, model=model, k=1) == [target.pk]
    assert found(call, query, limit=5)[-1] == target.run_id  # the last of five places
    assert found(call, query, limit=5)[:4] == [Episode.objects.get(pk=i).run_id for i in fused[:4]]
    assert target.run_id not in found(call, query, limit=3)  # three places (the turn start's) hold none


def test_the_nearest_by_meaning_is_among_the_first_five_and_the_second_among_the_first_ten():
    fused = list(range(1, 11))
    assert episode_search.with_nearest(fused, [11, 12], 10) == [1, 2, 3, 4, 11, 5, 6, 7, 8, 12]
    assert episode_search.with_nearest(fused, [8, 1], 10) == [1, 2, 3, 4, 8, 5, 6, 7, 9, 10]  # moved up, not doubled
    assert episode_search.with_nearest(fused, [3, 9], 10) == fused  # already in their places
    assert episode_search.with_nearest([1, 2, 3], [9, 8], 10) == [1, 2, 3, 9, 8]  # a short ranking: appended
    assert episode_search.with_nearest(fused[:5], [11], 5) == [1, 2, 3, 4, 11]
    assert [episode_search.held_places(n) for n in (1, 3, 4, 5, 9, 10, 20)] == [0, 0, 0, 1, 1, 2, 4]
