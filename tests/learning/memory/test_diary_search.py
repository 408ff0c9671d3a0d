"""The diary's similarity half is hybrid (a ranking by meaning fused with a ranking by words): notes
written through the production writer, read through the personal-memory pool, with the packaged
sentence model."""

from __future__ import annotations

import pytest

from core.providers.embeddings import embed_one
from core.words import search_words
from learning.memory import diary
from learning.models import DiaryEntry
from tests.factories import SeatFactory

pytestmark = pytest.mark.real_model

MODEL = "all-MiniLM-L6-v2"
OTHER_NOTES = [
    "Deploys freeze on Fridays after noon.",
    "Maya prefers short bullet-point status updates.",
    "The staging database credentials rotate every quarter.",
    "Refunds over 500 euros need a lead's approval.",
    "The customer asked for a refund of the duplicate charge.",
    "Refund requests are answered within two working days.",
    "A refund goes back to the card the customer paid with.",
    "Partial refunds are allowed for cancelled subscriptions.",
    "The billing export job is owned by the finance team.",
]



def write(seat, content):
    return diary.write(seat=seat, content=content, kind=DiaryEntry.LONG, source="persist_decider")


def recall(seat, query, limit, *, words=True):
    vector = embed_one(query, budget=None).vector
    return [e.content for e in diary.recall(seat=seat, vector=vector, model=MODEL, query=query if words else "",
                                            limit=limit)]


def test_a_note_sharing_only_a_rare_word_with_the_query_is_found(local_embedder, seat):
    for body in OTHER_NOTES:
        write(seat, body)
    target = write(seat, "Vantoro's office moved to the fourth floor.").content
    query = "Vantoro refund"  # by meaning the refund notes are nearer; only the name ties the query to the target
    assert target not in recall(seat, query, 3, words=False)  # the proof that the words, not the vector, find it
    assert target in recall(seat, query, 3)


def test_a_note_sharing_no_word_with_the_query_is_found_by_meaning(local_embedder, seat):
    for body in OTHER_NOTES:
        write(seat, body)
    target = write(seat, "The automobile engine is dead this morning; it makes a clicking noise.").content
    query = "my car won't start"
    assert not set(search_words(query)) & set(search_words(target))  # nothing for the full-text half to match
    assert recall(seat, query, 1) == [target]


def test_only_the_seats_own_live_notes_of_the_querys_model_are_searched(local_embedder, seat):
    other = SeatFactory(company=seat.company, role=seat.role, unit=seat.unit)
    write(other, "Ticket QZX-4471 is about the payroll export.")
    stale = write(seat, "Ticket QZX-4471 is about the payroll export, again.")
    DiaryEntry.objects.filter(pk=stale.pk).update(embedding_model="an-older-model")  # as if the company moved models
    mine = write(seat, "Lunch for the offsite: pizza for twelve.")
    assert recall(seat, "QZX-4471 payroll export", 5) == [mine.content]


def test_an_edited_note_is_searched_by_its_new_words_and_a_deleted_one_is_gone(local_embedder, seat):
    for body in OTHER_NOTES:
        write(seat, body)
    note = write(seat, "Please check ticket QZX-4471.")
    DiaryEntry.objects.filter(pk=note.pk).update(content="Closed as a duplicate of QZX-9000.")
    assert recall(seat, "QZX-9000", 1) == ["Closed as a duplicate of QZX-9000."]
    DiaryEntry.objects.filter(pk=note.pk).delete()
    assert "Closed as a duplicate of QZX-9000." not in recall(seat, "QZX-9000", 10)


def test_the_vector_half_answers_memory_vector_limit_notes_by_meaning(local_embedder, seat):
    for i in range(diary.MEMORY_VECTOR_LIMIT + 10):
        write(seat, f"Refund request {i}: the customer wants the duplicate charge on their card paid back.")
    found = recall(seat, "a customer asks for their money back", diary.MEMORY_VECTOR_LIMIT, words=False)
    assert len(found) == diary.MEMORY_VECTOR_LIMIT  # memoryVectorLimit: 50 by meaning, not the fusion's shortlist


