"""``budgets.charge``: the seat's and the company's counters of the current window, in one statement,
the window's first charge (which creates them) included."""

from __future__ import annotations

from datetime import timedelta

from django.db import connections
from django.test.utils import CaptureQueriesContext

from core import budgets
from core.models import BudgetCounter

WRITES = ("INSERT", "UPDATE", "DELETE")


def _spent(seat) -> tuple[int, int]:
    window = seat.company.budget_window
    return budgets.spent("seat", seat.pk, window), budgets.spent("company", seat.company_id, window)


def _writes(queries) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if q["sql"].lstrip().upper().startswith(WRITES)]


def test_a_windows_first_charge_creates_both_counters_in_one_write(seat):
    with CaptureQueriesContext(connections["default"]) as queries:
        budgets.charge(seat, 7)

    assert _spent(seat) == (7, 7)
    assert BudgetCounter.objects.count() == 2
    assert len(queries.captured_queries) == 1 and "core_budgetcounter" in _writes(queries)[0]


def test_a_later_charge_adds_to_both_counters_in_one_write(seat):
    budgets.charge(seat, 7)
    with CaptureQueriesContext(connections["default"]) as queries:
        budgets.charge(seat, 5)

    assert _spent(seat) == (12, 12)
    assert BudgetCounter.objects.count() == 2
    writes = _writes(queries)
    assert len(writes) == 1 and "core_budgetcounter" in writes[0]


def test_a_new_seat_gets_its_counter_while_the_companys_is_charged(seat, other_seat):
    budgets.charge(seat, 7)  # the company's counter exists, other_seat's does not

    budgets.charge(other_seat, 3)

    assert _spent(other_seat) == (3, 10)
    assert _spent(seat) == (7, 10)


def test_a_charge_leaves_other_windows_and_seats_alone(seat, other_seat):
    budgets.charge(seat, 7)
    budgets.charge(other_seat, 1)
    yesterday = budgets.window_start("day") - timedelta(days=1)
    BudgetCounter.objects.create(scope="seat", scope_id=seat.pk, window_start=yesterday, tokens=100)

    budgets.charge(seat, 2)

    assert _spent(seat) == (9, 10) and _spent(other_seat) == (1, 10)
    assert BudgetCounter.objects.get(scope="seat", scope_id=seat.pk, window_start=yesterday).tokens == 100
