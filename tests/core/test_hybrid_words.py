"""Which words the BM25 half of hybrid search matches (core.hybrid): a word in nearly every row of the
seat does not drown a rare word's match, and a query of such words alone still matches. Notes are written
through the diary's writer; the words' ranking is read on its own (no query vector), as a search that
could not embed its query is. A word's rarity is its rarity among the scope's rows, and a row of the scope
is found however many better matches outside the scope the seat holds."""

from __future__ import annotations

import math
from datetime import timedelta

from django.utils import timezone

from core import hybrid
from core.words import search_words
from learning.memory import diary
from learning.models import DiaryEntry
from tests.factories import SeatFactory

COMMON = [f"Caroline mentioned the {topic} again." for topic in (
    "garden", "marathon", "pottery class", "camping trip", "new puppy", "art show", "book club", "road trip",
    "piano lessons", "bake sale", "school play", "beach day")]


def write(seat, content):
    return diary.write(seat=seat, content=content, kind=DiaryEntry.LONG, source="persist_decider")


def by_words(seat, query, limit=5):
    """The seat's notes ranked by the query's words alone (the text half; no vector half)."""
    scope = "t.seat_id = %s"
    ids = [i for i, _ in hybrid.ranked(diary.CORPUS, scope=scope, scope_params=[seat.pk], vector=None, model="",
                                       words=search_words(query), limit=limit)]
    rows = DiaryEntry.objects.in_bulk(ids)
    return [rows[i].content for i in ids]


def test_a_word_in_nearly_every_row_does_not_drown_a_rare_words_match(seat):
    for body in COMMON:
        write(seat, body)
    # the common word said many times over: a rarer word's one mention still decides
    write(seat, "Caroline, Caroline and Caroline again: Caroline says Caroline is busy.")
    target = write(seat, "Caroline met the Vantoro accountant.").content
    found = by_words(seat, "Caroline Vantoro")
    assert found[0] == target


def test_a_query_of_only_common_words_still_matches_by_them(seat):
    for body in COMMON:
        write(seat, body)
    write(seat, "Lunch is at noon on Fridays.")
    found = by_words(seat, "Caroline", limit=20)
    assert found and all("Caroline" in text for text in found)
    assert "Lunch is at noon on Fridays." not in found


def test_a_words_rarity_is_counted_in_the_seats_own_rows(seat):
    other = SeatFactory(company=seat.company, role=seat.role, unit=seat.unit)
    for i in range(60):
        write(other, f"The Ostrava office sent invoice batch {i}.")  # common in another seat only
    ostrava = write(seat, "The Ostrava office is closed.").content  # the rarer word in this seat
    for city in ("Lisbon", "Porto", "Braga"):
        write(seat, f"The Kestrel review was moved to {city}.")
    found = by_words(seat, "Ostrava Kestrel")
    assert found[0] == ostrava  # Kestrel is in three of the seat's rows, Ostrava in one


def test_a_scope_row_is_found_below_many_better_matches_the_scope_leaves_out(seat):
    long_ago = timezone.now() - timedelta(days=30)
    for i in range(hybrid.SHORTLIST * 4):  # more than the text half's first cut
        diary.write(seat=seat, content=f"Tarvik Tarvik {i}", kind=DiaryEntry.SHORT, ttl_days=1, now=long_ago)
    live = write(seat, "The quarterly planning notes also mention Tarvik once, near the end.").content
    now = timezone.now()
    scope = "t.seat_id = %s AND (t.ttl_until IS NULL OR t.ttl_until > %s)"  # the diary's live notes
    ids = [i for i, _ in hybrid.ranked(diary.CORPUS, scope=scope, scope_params=[seat.pk, now], vector=None, model="",
                                       words=search_words("Tarvik"), limit=5)]
    assert [DiaryEntry.objects.get(pk=i).content for i in ids] == [live]


def test_a_words_other_forms_still_meet_it_in_the_seats_index(seat):
    write(seat, "Lunch is at noon on Fridays.")
    target = write(seat, "The exports were deployed by the finance team.").content
    assert by_words(seat, "export deploying") == [target]


def test_a_word_of_another_script_is_searched_whole(seat):
    german = write(seat, "Die Rückgabe der Bestellung dauert zwei Wochen.").content
    russian = write(seat, "Заказ клиента пришёл с опозданием.").content
    write(seat, "Lunch is at noon on Fridays.")
    assert search_words("Rückgabe заказ") == ["rückgabe", "заказ"]  # not "ckgabe", not nothing
    assert by_words(seat, "Rückgabe") == [german]
    assert by_words(seat, "Заказ") == [russian]


def test_each_score_is_bm25_of_the_words_its_row_holds(seat):
    """The statement's scores against BM25 worked out here from the stored word vectors: a word counts once a
    row, weighed ln(1 + (N - n + 0.5) / (n + 0.5)) by the n of the seat's N rows that hold it, and a row's
    length is normalised against the average of the rows that hold any query word."""
    from django.db import connection

    for body in COMMON[:6] + ["The Vantoro audit needs the garden budget.", "Vantoro called about pottery."]:
        write(seat, body)
    query = search_words("Vantoro garden pottery budget")
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, tsvector_to_array(search_tsv), search_len FROM agent_diary WHERE seat_id = %s",
                       [seat.pk])
        rows = {i: (set(lexemes), length) for i, lexemes, length in cursor.fetchall()}
        cursor.execute("SELECT querytree(to_tsquery('english', w)) FROM unnest(%s::text[]) w", [query])
        asked = [q.strip("'") for (q,) in cursor.fetchall()]
    matched = {i: row for i, row in rows.items() if row[0] & set(asked)}
    df = {w: sum(w in lexemes for lexemes, _ in rows.values()) for w in asked}
    average = sum(length for _, length in matched.values()) / len(matched)
    expected = {
        i: sum(math.log(1 + (len(rows) - df[w] + 0.5) / (df[w] + 0.5)) for w in asked if w in lexemes)
        * (hybrid.BM25_K1 + 1) / (1 + hybrid.BM25_K1 * (1 - hybrid.BM25_B + hybrid.BM25_B * length / average))
        for i, (lexemes, length) in matched.items()
    }
    got = dict(hybrid.by_words(diary.CORPUS, scope="t.seat_id = %s", scope_params=[seat.pk], words=query))
    assert got.keys() == expected.keys()
    assert all(math.isclose(got[i], expected[i], rel_tol=1e-9) for i in got)
