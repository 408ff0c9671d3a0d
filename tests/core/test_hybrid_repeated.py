"""Searches of one shape in a row (core.hybrid): each answers with its own seat, words, vector and floor,
and a row first in both rankings comes before a row first in one."""

from __future__ import annotations

from core import hybrid
from core.words import search_words
from learning.memory import diary
from learning.models import DiaryEntry
from tests.factories import SeatFactory

MODEL = "test-model"
SCOPE = "t.seat_id = %s AND t.embedding IS NOT NULL AND t.embedding_model = %s AND t.embedding_dim = %s"


def note(seat, content, vector):
    entry = diary.write(seat=seat, content=content, kind=DiaryEntry.LONG, source="persist_decider")
    entry.set_vector(vector, MODEL)
    entry.save(update_fields=["embedding", "embedding_model", "embedding_dim"])
    return entry.pk


def search(seat, query, vector, *, max_distance=None, limit=5):
    return [i for i, _ in hybrid.ranked(diary.CORPUS, scope=SCOPE, scope_params=[seat.pk, MODEL, len(vector)],
                                        vector=vector, model=MODEL, words=search_words(query), limit=limit,
                                        max_distance=max_distance)]


def test_searches_in_a_row_each_read_their_own_seat_and_words(seat):
    other = SeatFactory(company=seat.company, role=seat.role, unit=seat.unit)
    vantoro = note(seat, "Mirela from Vantoro called about the invoice.", [1.0, 0.0, 0.0])
    quillon = note(other, "The Quillon contract renews in March.", [1.0, 0.0, 0.0])
    theirs_too = note(other, "Vantoro also wrote to the other team.", [0.0, 1.0, 0.0])
    far = [0.0, 0.0, 1.0]  # near no note: only words can find one within the floor
    assert search(seat, "Vantoro", far, max_distance=0.5) == [vantoro]
    assert search(other, "Quillon", far, max_distance=0.5) == [quillon]
    assert search(other, "Vantoro", far, max_distance=0.5) == [theirs_too]
    assert search(seat, "Quillon", far, max_distance=0.5) == []


def test_a_row_first_by_meaning_and_by_words_comes_before_a_row_first_by_one(seat):
    by_words = note(seat, "The Vantoro renewal is due at the end of the quarter, after the audit.", [0.0, 1.0, 0.0])
    by_meaning = note(seat, "A contract comes up for signature again.", [1.0, 0.0, 0.0])
    both = note(seat, "Vantoro's contract comes up for signature.", [0.9, 0.1, 0.0])
    assert search(seat, "Vantoro", [1.0, 0.0, 0.0])[0] == both
    assert search(seat, "", [1.0, 0.0, 0.0]) == [by_meaning, both, by_words]  # meaning alone
    assert search(seat, "renewal", [0.0, 1.0, 0.0], limit=1) == [by_words]  # first in both rankings
