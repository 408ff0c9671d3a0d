"""A search that counts a word's rarity over the seat (``core.hybrid.ranked(seat_counts=True)``, the turn start's
episode recall): on PostgreSQL from each seat's row count and total length kept beside its postings (learning
migration 0020) instead of from a read of the seat's rows. The counts stay right through every way a row is
written; the ranking is the scope-counted one wherever the scope holds the seat's rows; a row the scope leaves
out is never answered, on both engines."""

from __future__ import annotations

import importlib

import pytest
from django.db import connection
from django.utils import timezone

from core import hybrid
from core.providers.embeddings import embed_one
from core.words import search_words
from learning import diary, episode_search
from learning.models import DiaryEntry, Episode
from tests.core.test_hybrid_postings import NOTES as TURNS
from tests.core.test_hybrid_postings import QUERIES
from tests.factories import SeatFactory

pg_only = pytest.mark.skipif("connection.vendor != 'postgresql'")
# the scope the turn start's episode recall searches (``episode_search.ranked``)
SCOPE = ("t.seat_id = %s AND t.kind = 'raw' AND t.embedding IS NOT NULL AND t.embedding_model = %s"
         " AND t.embedding_dim = %s")


def turn(seat, i, text, *, kind=Episode.RAW, vector=True):
    row = Episode(seat=seat, kind=kind, task_summary="Chat message", ask=text, plan_summary="Replied.",
                  review_outcome="done", started_at=timezone.now(), ended_at=timezone.now(),
                  run_id=f"run-{seat.pk}-{i}" if kind == Episode.RAW else "")
    if vector:
        embedded = embed_one(text, budget=None)
        row.set_vector(embedded.vector, embedded.model)
    return row


def search(seat, query, *, seat_counts, limit=8):
    embedded = embed_one(query, budget=None)
    return hybrid.ranked(episode_search.CORPUS, scope=SCOPE, scope_params=[seat.pk, embedded.model, len(embedded.vector)],
                         vector=embedded.vector, model=embedded.model, words=search_words(query), limit=limit,
                         seat=seat.pk, max_distance=episode_search.RECALL_MAX_DISTANCE, seat_counts=seat_counts)


def counts_kept(postings, table) -> list:
    """Each seat's kept counts against its rows counted now: (seat, rows, total length) where they differ."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COALESCE(k.seat_id, c.seat_id), k.rows, k.total_len, c.rows, c.total_len FROM"
                       f" (SELECT * FROM {postings}_stats WHERE rows <> 0) k FULL JOIN"
                       f" (SELECT seat_id, COUNT(*) AS rows, SUM(search_len) AS total_len FROM {table} GROUP BY seat_id) c"
                       " ON c.seat_id = k.seat_id WHERE k.rows IS DISTINCT FROM c.rows"
                       " OR k.total_len IS DISTINCT FROM c.total_len")
        return cursor.fetchall()


@pg_only
def test_each_seats_counts_follow_every_write(seat):
    other = SeatFactory(company=seat.company, role=seat.role, unit=seat.unit)
    notes = [diary.write(seat=seat, content=body, kind=DiaryEntry.LONG, source="persist_decider") for body in TURNS]
    Episode.objects.bulk_create([turn(seat, i, text) for i, text in enumerate(TURNS)])  # one statement
    Episode.objects.bulk_create([turn(other, i, text) for i, text in enumerate(TURNS[:3])])
    assert counts_kept("agent_diary_postings", "agent_diary") == []
    assert counts_kept("episodes_postings", "episodes") == []
    DiaryEntry.objects.filter(pk=notes[0].pk).update(content="A much longer note now: " + " ".join(TURNS))
    DiaryEntry.objects.filter(pk=notes[1].pk).update(seat=other)  # moved to another seat
    DiaryEntry.objects.filter(pk=notes[2].pk).delete()
    Episode.objects.filter(seat=seat, ask__contains="Caroline").delete()  # several in one statement
    assert counts_kept("agent_diary_postings", "agent_diary") == []
    assert counts_kept("episodes_postings", "episodes") == []
    with connection.cursor() as cursor:  # the migration's own count, for the rows stored before it
        cursor.execute("DELETE FROM episodes_postings_stats")
        migration = importlib.import_module("learning.migrations.0020_postings_seat_stats")
        cursor.execute(migration.forward_sql("episodes_postings", "episodes")[1])
        assert counts_kept("episodes_postings", "episodes") == []
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the test's open transaction checks its keys first
        cursor.execute("TRUNCATE episodes CASCADE")
        cursor.execute("SELECT COUNT(*) FROM episodes_postings_stats")
        assert cursor.fetchone()[0] == 0


@pg_only
def test_counted_over_the_seat_the_turns_rank_as_counted_over_the_scope(seat):
    other = SeatFactory(company=seat.company, role=seat.role, unit=seat.unit)
    Episode.objects.bulk_create([turn(seat, i, text) for i, text in enumerate(TURNS)])
    Episode.objects.bulk_create([turn(other, i, text) for i, text in enumerate(TURNS)])  # counted nowhere here
    for query in QUERIES:
        by_seat, by_scope = search(seat, query, seat_counts=True), search(seat, query, seat_counts=False)
        assert [i for i, _ in by_seat] == [i for i, _ in by_scope], query
        assert [s for _, s in by_seat] == pytest.approx([s for _, s in by_scope], abs=1e-12), query
    assert search(seat, "Vantoro invoices exported", seat_counts=True)  # something is found at all


def test_a_turn_the_scope_leaves_out_is_never_answered(seat):
    kept = Episode.objects.bulk_create([turn(seat, i, text) for i, text in enumerate(TURNS)])
    # a rare word of the query in a consolidated turn and in one the fill has not reached: the seat's best by words
    left_out = Episode.objects.bulk_create([turn(seat, 100, "Qorvath Qorvath Qorvath report.", kind=Episode.COMPACTED),
                                            turn(seat, 101, "Qorvath Qorvath notes.", vector=False)])
    found = [i for i, _ in search(seat, "Qorvath Vantoro", seat_counts=True)]
    assert not {r.pk for r in left_out} & set(found)
    assert {r.pk for r in kept if "Vantoro" in r.ask} <= set(found)  # the scope's turns holding the other word
