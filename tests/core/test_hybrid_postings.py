"""The words of a seat's rows as the text half reads them (core.hybrid): on PostgreSQL from each seat's
postings (``Corpus.postings``, kept by triggers, learning migration 0015), on SQLite from the seat's FTS5
tokens. Every way a row is written, moved, bulk-inserted, deleted or truncated leaves it searchable by its
words in its own seat only, on both engines; on PostgreSQL the postings rank exactly as the tsvector
scorer they replace, and leave nothing behind when their rows go."""

from __future__ import annotations

import dataclasses

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.utils import timezone

from core import hybrid
from core.providers.embeddings import embed_one
from core.words import search_words
from learning import diary, episode_search
from learning.models import DiaryEntry, Episode
from tests.factories import SeatFactory

NOTES = [
    "Caroline moved the billing export to Mondays.",
    "Caroline asked for the refund of order 5521 twice; the refund went out on Friday.",
    "The staging database credentials rotate every quarter.",
    "Maya prefers short status updates about the billing export.",
    "Deploys freeze on Fridays after noon, Caroline says.",
    "The Vantoro invoice batch was exported late again.",
    "Refunds over 500 euros need a lead's approval.",
    "Caroline, Caroline and Caroline again: Caroline is busy.",
]
QUERIES = ["Caroline billing export", "refund order 5521", "Vantoro invoices exported", "Caroline",
           "database credentials staging rotate", "nothing matches zzyzx"]
pg_only = pytest.mark.skipif("connection.vendor != 'postgresql'")


def write(seat, content):
    return diary.write(seat=seat, content=content, kind=DiaryEntry.LONG, source="persist_decider")


def by_words(corpus, seat, query, *, scope="t.seat_id = %s", limit=5):
    return [i for i, _ in hybrid.ranked(corpus, scope=scope, scope_params=[seat.pk], vector=None, model="",
                                        words=search_words(query), limit=limit, seat=seat.pk)]


def episode(seat, i, text):
    return Episode(seat=seat, task_summary="Chat message", ask=text, plan_summary="Replied.", review_outcome="done",
                   started_at=timezone.now(), ended_at=timezone.now(), run_id=f"run-{seat.pk}-{i}")


@pg_only
def test_the_postings_rank_as_the_tsvector_scorer_they_replace(seat):
    other = SeatFactory(company=seat.company, role=seat.role, unit=seat.unit)
    for body in NOTES:
        write(seat, body)
        write(other, body)  # the same words in another seat count nowhere here
    old = dataclasses.replace(diary.CORPUS, postings="")
    scope = "t.seat_id = %s AND t.embedding IS NOT NULL AND t.embedding_model = %s AND t.embedding_dim = %s"
    for query in QUERIES:
        vector = embed_one(query, budget=None)
        args = dict(scope=scope, scope_params=[seat.pk, vector.model, len(vector.vector)], vector=vector.vector,
                    model=vector.model, words=search_words(query), limit=8, seat=seat.pk, max_distance=0.9)
        new_rows, old_rows = hybrid.ranked(diary.CORPUS, **args), hybrid.ranked(old, **args)
        assert [i for i, _ in new_rows] == [i for i, _ in old_rows], query
        assert [s for _, s in new_rows] == pytest.approx([s for _, s in old_rows], abs=1e-12), query


@pg_only
def test_a_word_in_most_of_the_seats_rows_but_few_of_the_scopes_is_still_matched(seat):
    # the seat's postings count every row of the seat; the scope (live notes) leaves most "Tarvik" rows out,
    # so in the scope it is a rare word, not a common one
    long_ago = timezone.now() - timezone.timedelta(days=30)
    for i in range(20):
        diary.write(seat=seat, content=f"Tarvik Tarvik {i}", kind=DiaryEntry.SHORT, ttl_days=1, now=long_ago)
    tarvik = write(seat, "Tarvik moved the billing export.").id
    for body in ("Lunch is at noon.", "Lunch is late today.", "The billing export failed.", "Deploys freeze on Fridays.",
                 "The staging database credentials rotate."):
        write(seat, body)
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    scope = "t.seat_id = %s AND (t.ttl_until IS NULL OR t.ttl_until > %s)"
    args = dict(scope=scope, scope_params=[seat.pk, now], vector=None, model="", words=search_words("Tarvik lunch"),
                limit=5, seat=seat.pk)
    new_rows = hybrid.ranked(diary.CORPUS, **args)
    old_rows = hybrid.ranked(dataclasses.replace(diary.CORPUS, postings=""), **args)
    assert [i for i, _ in new_rows][:1] == [tarvik]  # the rarer word in the scope decides
    assert [i for i, _ in new_rows] == [i for i, _ in old_rows]
    assert [s for _, s in new_rows] == pytest.approx([s for _, s in old_rows], abs=1e-12)


@pg_only
def test_a_common_word_still_matches_when_the_rarer_word_is_only_in_rows_the_scope_leaves_out(seat):
    long_ago = timezone.now() - timezone.timedelta(days=30)
    diary.write(seat=seat, content="Vantoro sent the invoice.", kind=DiaryEntry.SHORT, ttl_days=1, now=long_ago)
    caroline = [write(seat, f"Caroline filed report {i}.").id for i in range(6)]
    write(seat, "Lunch is at noon.")
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    args = dict(scope="t.seat_id = %s AND (t.ttl_until IS NULL OR t.ttl_until > %s)", scope_params=[seat.pk, now],
                vector=None, model="", words=search_words("Caroline Vantoro"), limit=10, seat=seat.pk)
    new_rows = hybrid.ranked(diary.CORPUS, **args)
    old_rows = hybrid.ranked(dataclasses.replace(diary.CORPUS, postings=""), **args)
    assert sorted(i for i, _ in new_rows) == sorted(caroline)  # the common word, the only one in the scope
    assert [i for i, _ in new_rows] == [i for i, _ in old_rows]


def test_a_note_moved_to_another_seat_is_found_by_its_words_there_only(seat):
    other = SeatFactory(company=seat.company, role=seat.role, unit=seat.unit)
    write(seat, "Lunch is at noon on Fridays.")
    note = write(seat, "Mirela at Vantoro handles their invoices.")
    assert by_words(diary.CORPUS, seat, "Vantoro") == [note.pk]
    DiaryEntry.objects.filter(pk=note.pk).update(seat=other)
    assert by_words(diary.CORPUS, seat, "Vantoro") == []
    assert by_words(diary.CORPUS, other, "Vantoro") == [note.pk]


def test_turns_stored_in_one_bulk_insert_are_found_by_their_words_and_gone_once_deleted(seat):
    rows = Episode.objects.bulk_create([episode(seat, i, text) for i, text in enumerate(NOTES)])
    vantoro = next(r.pk for r in rows if "Vantoro" in r.ask)
    assert by_words(episode_search.CORPUS, seat, "Vantoro invoice") == [vantoro]
    Episode.objects.filter(seat=seat, ask__contains="Vantoro").delete()
    assert by_words(episode_search.CORPUS, seat, "Vantoro invoice") == []
    assert by_words(episode_search.CORPUS, seat, "staging credentials")  # the rest still found


def test_a_seats_corpus_is_searched_by_words_only_for_a_named_seat(seat):
    write(seat, "Mirela at Vantoro handles their invoices.")
    with pytest.raises(ValueError):
        hybrid.ranked(diary.CORPUS, scope="t.seat_id = %s", scope_params=[seat.pk], vector=None, model="",
                      words=["vantoro"], limit=5, seat=None)


@pg_only
def test_deleted_rows_leave_no_postings_behind(seat):
    notes = [write(seat, body) for body in NOTES]
    Episode.objects.bulk_create([episode(seat, i, text) for i, text in enumerate(NOTES)])
    DiaryEntry.objects.filter(pk=notes[0].pk).delete()  # one row
    assert postings("agent_diary_postings", [notes[0].pk]) == 0
    assert postings("agent_diary_postings", [n.pk for n in notes[1:]]) > 0
    DiaryEntry.objects.filter(seat=seat).delete()  # many in one statement
    Episode.objects.filter(seat=seat).delete()
    assert postings("agent_diary_postings", [n.pk for n in notes]) == 0
    assert postings("episodes_postings", None, seat=seat.pk) == 0


@pg_only
def test_a_truncated_table_takes_its_postings_with_it(seat):
    gone = write(seat, "Mirela at Vantoro handles their invoices.")
    with connection.cursor() as cursor:  # as a flush does, then the ids start over
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the test's open transaction checks its keys first
        cursor.execute("TRUNCATE agent_diary CASCADE")
        cursor.execute("SELECT setval(pg_get_serial_sequence('agent_diary', 'id'), %s, false)", [gone.pk])
    again = write(seat, "Standup is at ten.")
    assert again.pk == gone.pk  # the truncated note's id
    assert by_words(diary.CORPUS, seat, "Vantoro") == []
    assert by_words(diary.CORPUS, seat, "standup") == [again.pk]


@pytest.mark.django_db(transaction=True)
def test_rows_stored_before_the_postings_migration_are_found_by_their_words(seat):
    call_command("migrate", "learning", "0014_fts_seat_tokens", verbosity=0)
    try:
        for body in NOTES:
            write(seat, body)
        note = write(seat, "Mirela at Vantoro handles their invoices.")
        turn = Episode.objects.create(seat=seat, task_summary="Chat message", ask="Ticket QZX-4471 is the payroll export.",
                                      plan_summary="Replied.", review_outcome="done", started_at=timezone.now(),
                                      ended_at=timezone.now(), run_id="run-before")
    finally:
        call_command("migrate", verbosity=0)
    assert by_words(diary.CORPUS, seat, "Mirela") == [note.pk]
    assert by_words(episode_search.CORPUS, seat, "QZX-4471 payroll") == [turn.pk]
    if connection.vendor == "postgresql":  # each posting carries its row's length, filled for the rows stored before
        assert stale_lengths("agent_diary_postings", "agent_diary") == 0
        assert stale_lengths("episodes_postings", "episodes") == 0


@pg_only
def test_an_edited_row_is_scored_by_its_new_length(seat):
    notes = [write(seat, body) for body in NOTES]
    refund = notes[1]
    DiaryEntry.objects.filter(pk=refund.pk).update(
        content="The refund of order 5521 " + " ".join(f"waited on ledger entry {i}" for i in range(30)) + ".")
    assert stale_lengths("agent_diary_postings", "agent_diary") == 0
    old = dataclasses.replace(diary.CORPUS, postings="")
    for query in ("refund order 5521", "Caroline refund", "ledger entry"):
        args = dict(scope="t.seat_id = %s", scope_params=[seat.pk], vector=None, model="", words=search_words(query),
                    limit=8, seat=seat.pk)
        new_rows, old_rows = hybrid.ranked(diary.CORPUS, **args), hybrid.ranked(old, **args)
        assert refund.pk in [i for i, _ in new_rows], query
        assert [i for i, _ in new_rows] == [i for i, _ in old_rows], query
        assert [s for _, s in new_rows] == pytest.approx([s for _, s in old_rows], abs=1e-12), query


def stale_lengths(postings, table) -> int:
    """Postings whose length is not their row's (``search_len``, the BM25 length the tsvector scorer reads)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM {postings} p JOIN {table} t ON t.id = p.row_id"
                       " WHERE p.len IS DISTINCT FROM t.search_len")
        return cursor.fetchone()[0]


def postings(table, row_ids, *, seat=None) -> int:
    with connection.cursor() as cursor:
        if seat is not None:
            cursor.execute(f"SELECT COUNT(*) FROM {table} WHERE seat_id = %s", [seat])
        else:
            cursor.execute(f"SELECT COUNT(*) FROM {table} WHERE row_id = ANY(%s)", [row_ids])
        return cursor.fetchone()[0]


def test_rows_of_the_same_words_tie_and_the_newest_comes_first(seat):
    # each row's BM25 terms summed in one order: rows of the same words get the same sum to the last bit, so the
    # tie rule (newest id first) decides -- on PostgreSQL however the sort that groups the postings by row leaves
    # them (summed as they came, these rows' sums came out a few last bits apart and the first of ten was 399)
    same = Episode.objects.bulk_create(
        [episode(seat, i, "Orvan Orvan Pellix Quorra Quorra Quorra overnight") for i in range(400)])
    # the same words in some other rows too, so each has its own rarity: four different terms a row
    others = [f"Lunch menu {i} at noon" + " Pellix" * (i < 150) + " Quorra" * (i < 60) + " overnight" * (i < 20)
              for i in range(600)]
    Episode.objects.bulk_create([episode(seat, 1000 + i, text) for i, text in enumerate(others)])
    newest = sorted((r.pk for r in same), reverse=True)[:10]
    assert by_words(episode_search.CORPUS, seat, "Orvan Pellix Quorra overnight", limit=10) == newest


@pg_only
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("table", ["episodes", "agent_diary"])
def test_a_delete_trigger_planned_on_empty_tables_still_finds_each_rows_postings_by_key(seat, table):
    """The delete triggers' statements are planned again for the rows each DELETE removed. Cached as planned in a
    backend's first DELETE -- on the empty tables of a new install -- every deleted row's lexeme scanned all of the
    postings (bench/lifecycle.py's sweep of 50,000 turns ran past ten minutes instead of a second)."""
    from learning.models import EpisodePiece

    model = Episode if table == "episodes" else DiaryEntry
    connection.close()  # a backend of its own: no plan cached by an earlier test
    model.objects.filter(seat=seat).delete()  # the backend's first DELETE of the table: the tables are empty
    words = "invoice refund ledger payroll export billing staging deploy rotate credentials".split()
    texts = [f"{' '.join(words[i % 5:i % 5 + 5])} case{i} batch{i % 40}" for i in range(600)]
    with transaction.atomic():
        if model is Episode:
            turns = Episode.objects.bulk_create([episode(seat, i, text) for i, text in enumerate(texts)])
            EpisodePiece.objects.bulk_create([EpisodePiece(episode=t, ordinal=0, embedding=[1.0, 0.0, 0.0],
                                                           embedding_model="m", embedding_dim=3) for t in turns])
        else:
            DiaryEntry.objects.bulk_create([DiaryEntry(seat=seat, kind=DiaryEntry.LONG, content=text, created_at=timezone.now())
                                            for text in texts])
        model.objects.filter(seat=seat).delete()
        with connection.cursor() as cursor:
            cursor.execute("SELECT relname, seq_scan FROM pg_stat_xact_user_tables WHERE relname IN (%s, %s)",
                           [f"{table}_postings", "episode_pieces"])
            scans = dict(cursor.fetchall())
            cursor.execute(f"SELECT COUNT(*) FROM {table}_postings")
            left = cursor.fetchone()[0]
    assert left == 0 and not EpisodePiece.objects.exists()
    assert scans.get(f"{table}_postings", 0) <= 1 and scans.get("episode_pieces", 0) <= 1, scans
