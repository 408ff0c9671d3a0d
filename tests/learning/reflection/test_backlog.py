"""reflect_backlog: reflect stored turns that never reflected, narrowed by --since and --seat."""

from datetime import timedelta
from io import StringIO
from unittest import mock

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from core.models import Event
from learning.models import Turn


def run(*args) -> str:
    out = StringIO()
    call_command("reflect_backlog", *args, stdout=out)
    return out.getvalue()


def test_every_unreflected_turn_is_reflected_once(seat, make_turn):
    turns = [make_turn() for _ in range(3)]
    make_turn(review_outcome="skipped")
    out = run()
    assert "4 turn(s) without a reflection: 4 reflected" in out and "no_engagement x1" in out
    assert not Turn.objects.filter(reflected_at__isnull=True).exists()
    assert run().startswith("0 turn(s) without a reflection: nothing to reflect")
    assert Event.objects.filter(name="reflection_completed").count() == 4
    assert {t.pk for t in turns} <= set(Event.objects.values_list("payload__turn", flat=True))


def test_since_and_seat_narrow_the_backlog(seat, other_seat, make_turn):
    old = make_turn()
    Turn.objects.filter(pk=old.pk).update(received_at=timezone.now() - timedelta(days=10))
    make_turn()
    theirs = make_turn(other_seat)
    since = (timezone.now() - timedelta(days=1)).date().isoformat()
    assert "1 reflected" in run("--since", since, "--seat", seat.handle)
    assert Turn.objects.get(pk=old.pk).reflected_at is None
    assert Turn.objects.get(pk=theirs.pk).reflected_at is None


def test_a_turn_skipped_for_budget_stays_in_the_backlog(seat, make_turn):
    make_turn()
    with mock.patch("core.budgets.has_room", return_value=False):
        assert "no_budget x1" in run()
    assert "1 reflected" in run()
    assert Turn.objects.get().reflected_at is not None


def test_bad_arguments_are_named(seat):
    with pytest.raises(CommandError, match="--since"):
        run("--since", "last tuesday")
    with pytest.raises(CommandError, match="--seat"):
        run("--seat", "nobody")


def test_a_terminal_gets_a_progress_bar(seat, make_turn, capsys):
    make_turn()
    out = StringIO()
    out.isatty = lambda: True
    call_command("reflect_backlog", stdout=out)
    assert "reflecting" in capsys.readouterr().err and "1 reflected" in out.getvalue()
