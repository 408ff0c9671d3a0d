"""PostgreSQL plans the hybrid statement once per connection whatever seat it serves (core.hybrid): its
parameters reach it through one-row subqueries, so the planner's estimates are the same for a seat of
one note as for a seat of two hundred, and the prepared statement settles on its generic plan instead of
planning again for every query of a small seat (planning costs about as much as running it)."""

from __future__ import annotations

import pytest
from django.db import connection

from core import hybrid
from core.providers.embeddings import embed_one
from core.words import search_words
from learning import diary
from learning.models import DiaryEntry
from tests.factories import SeatFactory

# a scope no other test uses, so this test's prepared statement is its own
SCOPE = ("t.seat_id = %s AND t.kind IN ('diary_long', 'diary_short') AND t.embedding IS NOT NULL"
         " AND t.embedding_model = %s AND t.embedding_dim = %s")


def plans() -> tuple[int, int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT generic_plans, custom_plans FROM pg_prepared_statements"
                       " WHERE statement LIKE %s", ["%" + SCOPE.replace("%s", "%%") + "%"])
        rows = cursor.fetchall()
    assert len(rows) == 1, rows
    return rows[0]


@pytest.mark.skipif("connection.vendor != 'postgresql'")
def test_a_small_seats_searches_reuse_one_generic_plan(seat):
    big = SeatFactory(company=seat.company, role=seat.role, unit=seat.unit)
    for i in range(300):
        diary.write(seat=big, content=f"Release note {i}: the billing export ran late.", kind=DiaryEntry.LONG)
    found = diary.write(seat=seat, content="The billing export moved to Mondays.", kind=DiaryEntry.LONG)
    diary.write(seat=seat, content="Standup is at ten.", kind=DiaryEntry.LONG)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE agent_diary")  # the planner knows the big seat holds nearly every row
    query = embed_one("billing export", budget=None)
    for _ in range(12):
        ids = [i for i, _ in hybrid.ranked(diary.CORPUS, scope=SCOPE, scope_params=[seat.pk, query.model, len(query.vector)],
                                           vector=query.vector, model=query.model, words=search_words("billing export"),
                                           limit=5, seat=seat.pk)]
        assert ids[0] == found.pk
    generic, custom = plans()
    assert custom <= 5, (generic, custom)  # the five custom plans PostgreSQL always makes first, then only the generic one
    assert generic >= 5
