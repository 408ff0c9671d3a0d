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


def test_a_turn_stored_before_the_bounds_with_a_value_past_them_is_reflected_with_it_unknown(seat):
    """An older intake stored what today's refuses (a duration of 1e20, a time past year 9999 in UTC): the
    row still loads, the value read as unknown, and its episode is filed."""
    from tests.learning.reflection.conftest import record

    payload = record(seat, duration_ms=10**20, ended_at="9999-12-31T23:59:59-05:00")
    turn = Turn.objects.create(run_id=payload["run_id"], work_key=payload["work_key"], seat=seat,
                               conversation_id=payload["conversation_id"], conversation_kind="chat",
                               review_outcome="done", payload=payload)
    assert reflect_turn(turn.pk)["status"] == "reflected"
    episode = Episode.objects.get(run_id=turn.run_id)
    assert episode.duration_ms is None and episode.ended_at.year < 3000
