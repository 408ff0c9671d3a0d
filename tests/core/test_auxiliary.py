"""The auxiliary seam: attribution before resolution, charging, the spend event, the budget gate."""

from __future__ import annotations

from contextlib import contextmanager
from datetime import UTC, datetime

import pytest
from django.db import DatabaseError, connection
from pydantic import BaseModel, ConfigDict

from core import auxiliary, budgets, purposes
from core.models import BudgetCounter, Event
from core.providers.errors import RefusedError, TransientError, TruncatedError
from core.providers.llm.scripted import ScriptedProvider


class Asked(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ask: str = ""


ECHO = purposes.register(
    purposes.Purpose(
        name="test_aux_echo",
        inputs=Asked,
        render=lambda inputs: purposes.system_user("Answer in one word.", inputs.ask),
        parse=lambda text: text.strip(),
        offline=lambda inputs: "offline-answer",
        max_tokens=16,
    )
)
STRICT = purposes.register(
    purposes.Purpose(
        name="test_aux_strict_json",
        inputs=Asked,
        render=lambda inputs: purposes.system_user("Answer with a JSON object.", "go"),
        parse=lambda text: purposes.parse_json_object("test_aux_strict_json", text),
        offline=lambda inputs: "{}",
        json=True,
    )
)


@pytest.fixture
def scripted_seat(seat):
    seat.role.llm_auxiliary = ["scripted"]
    seat.role.save()
    return seat


@pytest.fixture
def builds(monkeypatch):
    """Every provider the seam resolves, by alias."""
    from core.providers import llm

    resolved, real = [], llm.build

    def recording_build(alias, spec):
        resolved.append(alias)
        return real(alias, spec)

    monkeypatch.setattr(llm, "build", recording_build)
    return resolved


def ask(seat, **overrides):
    kwargs = dict(seat=seat, stage="turn", purpose=ECHO.name, turn_id="turn-7", inputs={"ask": "colour?"})
    return auxiliary.call(**{**kwargs, **overrides})


@contextmanager
def unreadable(table: str):
    """Every query touching ``table`` fails as the database would."""

    def refuse(execute, sql, params, many, context):
        if table in sql:
            raise DatabaseError(f"{table} is unreadable")
        return execute(sql, params, many, context)

    with connection.execute_wrapper(refuse):
        yield


# attribution ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        ({"stage": ""}, "stage"),
        ({"stage": "lunch"}, "stage"),
        ({"purpose": ""}, "no purpose"),
    ],
)
def test_an_unattributed_call_is_refused_before_any_model_is_resolved(scripted_seat, builds, overrides, reason):
    ScriptedProvider.queue("*", "should never be read")

    with pytest.raises(auxiliary.UnattributedCall, match=reason):
        ask(scripted_seat, **overrides)

    assert builds == []
    assert ScriptedProvider.calls == []
    assert not Event.objects.filter(name="auxiliary_spend").exists()
    assert not BudgetCounter.objects.exists()


def test_an_unregistered_purpose_is_refused_before_any_model_is_resolved(scripted_seat, builds):
    with pytest.raises(purposes.UnknownPurpose, match="no purpose named 'no_such_purpose'"):
        ask(scripted_seat, purpose="no_such_purpose")

    assert builds == []
    assert ScriptedProvider.calls == []


def test_every_spec_stage_is_accepted(scripted_seat):
    for stage in ("turn", "reflection", "background", "operator"):
        assert ask(scripted_seat, stage=stage).value == "offline-answer"

    assert [e.payload["stage"] for e in Event.objects.filter(name="auxiliary_spend").order_by("id")] == [
        "turn", "reflection", "background", "operator"
    ]


def test_a_seat_with_no_auxiliary_model_is_a_configuration_error_charging_nothing(seat, builds):
    seat.role.llm_auxiliary, seat.role.llm = [], []
    seat.role.save()

    with pytest.raises(auxiliary.NoAuxiliaryModel, match=seat.handle):
        ask(seat)

    assert builds == []
    assert not BudgetCounter.objects.exists()


def test_inputs_the_purpose_refuses_raise_naming_the_purpose_and_the_key_before_any_model(scripted_seat, builds):
    with pytest.raises(purposes.InvalidInputs, match=r"test_aux_echo: invalid inputs \(aks: Extra inputs"):
        ask(scripted_seat, inputs={"aks": "colour?"})
    with pytest.raises(purposes.InvalidInputs, match=r"test_aux_echo: invalid inputs \(ask: Input should be a valid string"):
        ask(scripted_seat, inputs={"ask": 7})
    class Other(BaseModel):  # another purpose's model, with the same field
        ask: str = ""

    with pytest.raises(purposes.InvalidInputs, match="is not tests.core.test_auxiliary.Asked"):
        ask(scripted_seat, inputs=Other(ask="colour?"))

    assert builds == [] and not Event.objects.filter(name="auxiliary_spend").exists()


def test_the_inputs_model_itself_is_taken_as_it_is(scripted_seat):
    ScriptedProvider.queue(ECHO.name, "teal")
    asked = Asked(ask="colour?")

    ask(scripted_seat, inputs=asked)

    assert ScriptedProvider.calls[-1]["inputs"] is asked


# charging and the spend event ----------------------------------------------------------------


def test_an_attributed_call_reaches_the_provider_with_the_rendered_prompt(scripted_seat):
    ScriptedProvider.queue(ECHO.name, "teal")

    result = ask(scripted_seat)

    assert result.value == "teal"
    (sent,) = ScriptedProvider.calls
    assert sent["purpose"] == ECHO.name
    assert sent["messages"] == ECHO.render(Asked(ask="colour?")) and sent["inputs"] == Asked(ask="colour?")


def test_an_answered_call_is_charged_to_the_seat_and_the_company_in_the_current_window(scripted_seat):
    ScriptedProvider.queue(ECHO.name, "deep teal")

    result = ask(scripted_seat)

    spent = result.input_tokens + result.output_tokens
    assert result.output_tokens == 2 and result.input_tokens > 0
    start = budgets.window_start(scripted_seat.company.budget_window)
    seat_row = BudgetCounter.objects.get(scope="seat", scope_id=scripted_seat.pk)
    company_row = BudgetCounter.objects.get(scope="company", scope_id=scripted_seat.company_id)
    assert (seat_row.tokens, company_row.tokens) == (spent, spent)
    assert seat_row.window_start == start == company_row.window_start


def test_calls_in_one_window_add_up(scripted_seat, other_seat):
    ScriptedProvider.queue(ECHO.name, "one", "two words")

    first, second = ask(scripted_seat), ask(other_seat)

    total = sum(r.input_tokens + r.output_tokens for r in (first, second))
    assert budgets.spent("company", scripted_seat.company_id, "day") == total
    assert budgets.spent("seat", scripted_seat.pk, "day") == first.input_tokens + first.output_tokens


def test_a_monthly_company_is_charged_in_the_month_window(scripted_seat):
    scripted_seat.company.budget_window = "month"
    scripted_seat.company.save()

    ask(scripted_seat)

    row = BudgetCounter.objects.get(scope="seat", scope_id=scripted_seat.pk)
    assert row.window_start.day == 1
    assert row.window_start == budgets.window_start("month")


def test_month_window_starts_on_the_first_and_day_window_at_midnight():
    now = datetime(2025, 3, 17, 15, 42, 9, tzinfo=UTC)

    assert budgets.window_start("month", now) == datetime(2025, 3, 1, tzinfo=UTC)
    assert budgets.window_start("day", now) == datetime(2025, 3, 17, tzinfo=UTC)


def test_an_answered_call_is_recorded_as_auxiliary_spend(scripted_seat):
    ScriptedProvider.queue(ECHO.name, "teal")

    result = ask(scripted_seat, stage="background")

    event = Event.objects.get(name="auxiliary_spend")
    assert event.seat == scripted_seat
    assert event.turn_id == "turn-7"
    assert event.payload == {
        "stage": "background",
        "purpose": ECHO.name,
        "provider": "scripted",
        "model": result.model,
        "input_tokens": result.input_tokens,
        "output_tokens": result.output_tokens,
        "outcome": "answered",
        "finish": "stop",
        "reason": "",
    }


def test_an_answer_that_does_not_parse_is_still_charged_and_recorded(scripted_seat):
    ScriptedProvider.queue(STRICT.name, "not json at all")

    with pytest.raises(purposes.AnswerUnparseable):
        ask(scripted_seat, purpose=STRICT.name, stage="background")

    event = Event.objects.get(name="auxiliary_spend", payload__purpose=STRICT.name)
    assert (event.payload["outcome"], event.payload["reason"]) == ("unparseable", "no JSON object in the answer")
    assert budgets.spent("seat", scripted_seat.pk, "day") > 0


def test_a_turn_stage_answer_that_does_not_parse_is_answered_offline_and_says_why(scripted_seat):
    ScriptedProvider.queue(STRICT.name, "not json at all")

    result = ask(scripted_seat, purpose=STRICT.name)

    assert (result.provider, result.value) == ("offline", {})
    assert result.fallback == "scripted: test_aux_strict_json: unparseable answer (no JSON object in the answer)"
    assert [e.payload["outcome"] for e in Event.objects.filter(name="auxiliary_spend")] == ["unparseable"]


def test_a_refused_call_is_recorded_as_refused_and_charged_what_it_reported(scripted_seat):
    ScriptedProvider.queue(ECHO.name, RefusedError("policy", input_tokens=30, output_tokens=2))

    with pytest.raises(RefusedError):
        ask(scripted_seat, stage="background")

    event = Event.objects.get(name="auxiliary_spend")
    assert (event.payload["outcome"], event.payload["input_tokens"], event.payload["output_tokens"]) == ("refused", 30, 2)
    assert budgets.spent("seat", scripted_seat.pk, "day") == 32


def test_a_truncated_answer_is_recorded_as_truncated_charged_and_falls_through(seat):
    seat.role.llm_auxiliary = ["scripted", "offline"]
    seat.role.save()
    ScriptedProvider.queue(ECHO.name, TruncatedError("cut off", input_tokens=40, output_tokens=16, finish="length"))

    result = ask(seat)

    assert result.provider == "offline"
    rows = [e.payload for e in Event.objects.filter(name="auxiliary_spend").order_by("id")]
    assert [(r["provider"], r["outcome"], r["finish"]) for r in rows] == [("scripted", "truncated", "length"), ("offline", "answered", "stop")]
    assert budgets.spent("seat", seat.pk, "day") == 56 + result.input_tokens + result.output_tokens


def test_a_transient_failure_falls_through_to_the_next_alias_and_only_it_is_charged(seat):
    seat.role.llm_auxiliary = ["scripted", "offline"]
    seat.role.save()
    ScriptedProvider.queue(ECHO.name, TransientError("503"))

    result = ask(seat)

    assert (result.provider, result.value) == ("offline", "offline-answer")
    rows = [e.payload for e in Event.objects.filter(name="auxiliary_spend").order_by("id")]
    assert [(r["provider"], r["outcome"]) for r in rows] == [("scripted", "transient"), ("offline", "answered")]
    assert budgets.spent("seat", seat.pk, "day") == result.input_tokens + result.output_tokens


def test_a_refusal_is_sent_to_no_other_model(seat, builds):
    seat.role.llm_auxiliary = ["scripted", "offline"]
    seat.role.save()
    ScriptedProvider.queue(ECHO.name, RefusedError("policy"))

    with pytest.raises(RefusedError):
        ask(seat, stage="background")
    assert builds == ["scripted"]

    ScriptedProvider.queue(ECHO.name, RefusedError("policy"))
    result = ask(seat)  # a turn's call: the offline floor answers, no other alias is asked
    assert (result.provider, result.value) == ("offline", "offline-answer")
    assert builds == ["scripted", "scripted"]


def test_a_failed_charge_or_spend_write_does_not_fail_the_call(scripted_seat):
    ScriptedProvider.queue(ECHO.name, "teal")

    with unreadable("budgetcounter"), unreadable("core_event"):
        result = ask(scripted_seat)

    assert result.value == "teal"


# the budget gate -----------------------------------------------------------------------------


def test_has_room_with_no_ceilings_is_true(seat):
    budgets.charge(seat, 10_000)

    assert budgets.has_room(seat) is True


def test_has_room_is_false_once_the_seat_reaches_its_ceiling(seat):
    seat.token_budget = 100
    seat.save()
    budgets.charge(seat, 99)
    assert budgets.has_room(seat) is True

    budgets.charge(seat, 1)
    assert budgets.has_room(seat) is False


def test_the_role_ceiling_applies_when_the_seat_names_none(seat):
    seat.role.token_budget = 50
    seat.role.save()
    budgets.charge(seat, 50)

    assert budgets.has_room(seat) is False


def test_has_room_is_false_once_the_company_reaches_its_ceiling(seat, other_seat):
    seat.company.token_budget = 100
    seat.company.save()
    budgets.charge(other_seat, 100)

    assert budgets.has_room(seat) is False


def test_an_earlier_window_does_not_count(seat):
    seat.token_budget = 100
    seat.save()
    BudgetCounter.objects.create(
        scope="seat", scope_id=seat.pk, window_start=datetime(2020, 1, 1, tzinfo=UTC), tokens=500
    )

    assert budgets.has_room(seat) is True


def test_has_room_is_unknown_when_the_counter_is_unreadable(seat):
    seat.token_budget = 100
    seat.save()

    with unreadable("budgetcounter"):
        assert budgets.has_room(seat) is None
