"""A turn is never marked reflected without its episode: a failed episodist rolls the pass back and
leaves the turn for a later pass, which files it."""

from __future__ import annotations

from django.db import DatabaseError, connection

from learning.models import DiaryEntry, Episode, Turn
from learning.reflection import reflect_turn


def test_an_episode_that_cannot_be_filed_leaves_the_turn_unreflected_and_a_later_pass_files_it(seat, make_turn):
    def episodes_refused(execute, sql, params, many, context):
        if sql.startswith('INSERT INTO "episodes"'):
            raise DatabaseError("episodes: disk full")
        return execute(sql, params, many, context)

    turn = make_turn()
    with connection.execute_wrapper(episodes_refused):
        outcome = reflect_turn(turn.pk)
    assert outcome["status"] == "error"
    turn.refresh_from_db()
    assert turn.reflected_at is None and not Episode.objects.exists()
    assert not DiaryEntry.objects.exists()  # the pass's other writes went with it: the next pass writes them once

    assert reflect_turn(turn.pk)["status"] == "reflected"
    assert Turn.objects.get(pk=turn.pk).reflected_at is not None
    assert Episode.objects.get().run_id == turn.run_id and DiaryEntry.objects.count() == 1
