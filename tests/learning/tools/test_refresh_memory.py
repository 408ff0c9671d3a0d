"""refresh_memory: the per-turn cap, idempotent repeats from the ledger, failed calls, per-run isolation."""

import json

import pytest

from core.models import Event
from core.providers.errors import TransientError
from core.providers.llm.scripted import ScriptedProvider
from crewlet.config import schema
from crewlet.errors import BadInput
from learning.models import DiaryEntry, RefreshLedger
from learning.prefetch import PrefetchRequest, bounds, prefetch
from tests.learning.memory.rows import note, said


@pytest.fixture
def scripted(role):
    role.llm_auxiliary = ["scripted"]
    role.save()


@pytest.fixture
def notes(seat):
    return [note(seat, f"The billing export fact number {i}") for i in range(6)]


def filter_calls():
    return [c for c in ScriptedProvider.calls if c["purpose"] == "memory_relevance_filter"]


def spend(run_id):
    return Event.objects.filter(name="auxiliary_spend", turn_id=run_id, payload__purpose="memory_relevance_filter").count()


def test_the_cap_refuses_naming_the_count_spent(seat, call, notes):
    for i in range(3):
        assert call("refresh_memory", context_hint=f"billing export angle {i}").ok
    refused = call("refresh_memory", context_hint="billing export angle 4")
    assert not refused.ok and "spent 3 of its 3 refreshes" in refused.text
    assert "learning.personal_memory.max_refreshes_per_turn" in refused.text
    assert spend("run-1") == 3


def test_the_cap_follows_the_knob(seat, call, notes, serve_config):
    serve_config(learning=schema.Learning(personal_memory=schema.PersonalMemory(max_refreshes_per_turn=1)))
    assert call("refresh_memory", context_hint="billing one").ok
    assert "spent 1 of its 1 refreshes" in call("refresh_memory", context_hint="billing two").text


def test_a_repeat_hint_is_answered_from_the_ledger_without_a_call(seat, call, notes, scripted):
    first = call("refresh_memory", context_hint="The Billing   export")
    again = call("refresh_memory", context_hint="  the billing EXPORT ")
    assert len(filter_calls()) == 1 and spend("run-1") == 1
    assert again.data["entry_ids"] == first.data["entry_ids"] and again.data["repeat"] is True
    assert "no refresh spent" in again.text
    assert RefreshLedger.objects.get(run_id="run-1").spent == 1
    for i in range(3):  # repeats stay free after the cap is spent
        call("refresh_memory", context_hint=f"other hint {i}")
    assert call("refresh_memory", context_hint="the billing export").ok


def test_a_repeat_of_nothing_bears_on_this_is_answered_from_the_ledger_too(seat, call, notes, scripted):
    ScriptedProvider.queue("memory_relevance_filter", '{"selected": []}')
    assert call("refresh_memory", context_hint="lunch").text == "Nothing in your notes bears on this."
    assert call("refresh_memory", context_hint="LUNCH").text.startswith("Nothing in your notes bears on this.")
    assert len(filter_calls()) == 1


def test_a_larger_limit_on_a_repeat_gets_the_extra_rows(seat, call, notes, scripted):
    ids = [n.id for n in notes]
    ScriptedProvider.queue("memory_relevance_filter", json.dumps({"selected": ids}))
    first = call("refresh_memory", context_hint="billing", limit=2)
    more = call("refresh_memory", context_hint="billing", limit=5)
    assert first.data["entry_ids"] == ids[:2] and more.data["entry_ids"] == ids[:5]
    assert len(filter_calls()) == 1
    counts = dict(DiaryEntry.objects.values_list("id", "use_count"))
    assert [counts[i] for i in ids] == [1, 1, 1, 1, 1, 0]  # each shown note counted once, the unshown not at all


def test_a_failed_filter_call_is_answered_offline_within_its_slot(seat, call, notes, scripted):
    ScriptedProvider.queue("memory_relevance_filter", TransientError("503"))
    answered = call("refresh_memory", context_hint="billing")
    assert answered.ok and "billing" in answered.text and len(filter_calls()) == 1
    assert RefreshLedger.objects.get(run_id="run-1").spent == 1


def test_state_is_per_run_and_never_leaks_into_another_turn(seat, call, notes):
    for i in range(3):
        call("refresh_memory", context_hint=f"hint {i}", run_id="turn-a")
    assert not call("refresh_memory", context_hint="hint 9", run_id="turn-a").ok
    fresh = call("refresh_memory", context_hint="hint 0", run_id="turn-b")
    assert fresh.ok and fresh.data["repeat"] is False and fresh.data["spent"] == 1


def test_state_is_bounded_to_the_most_recent_runs(seat, call, notes, monkeypatch):
    monkeypatch.setattr(bounds, "FROZEN_RUNS_KEPT", 4)
    for i in range(7):
        call("refresh_memory", context_hint="billing", run_id=f"turn-{i}")
    assert list(RefreshLedger.objects.order_by("id").values_list("run_id", flat=True)) == [
        "turn-3", "turn-4", "turn-5", "turn-6"]


def test_a_busy_seat_never_resets_another_seats_spent_refreshes(seat, other_seat, call, notes, monkeypatch):
    monkeypatch.setattr(bounds, "FROZEN_RUNS_KEPT", 4)
    note(other_seat, "The billing export fact of bo")
    for i in range(3):
        assert call("refresh_memory", context_hint=f"billing {i}", run_id="quiet", target=other_seat).ok
    for i in range(7):
        call("refresh_memory", context_hint="billing", run_id=f"turn-{i}")
    assert RefreshLedger.objects.get(seat=other_seat, run_id="quiet").spent == 3
    refused = call("refresh_memory", context_hint="billing 4", run_id="quiet", target=other_seat)
    assert not refused.ok and "spent 3 of its 3 refreshes" in refused.text
    assert RefreshLedger.objects.filter(seat=seat).count() == 4


def test_the_filter_is_told_who_triggered_the_turn(seat, call, notes, scripted):
    prefetch(seat=seat, request=PrefetchRequest(run_id="run-1", ask="+1", requires_recon=True, interactions=(
        said("+1", handle="carol", name="Carol", platform="mattermost"),)))
    call("refresh_memory", context_hint="billing export for carol")
    assert filter_calls()[-1]["inputs"].triggered_by == ["Carol (mattermost)"]
    assert filter_calls()[-1]["inputs"].query == "billing export for carol"


def test_the_filter_is_told_who_triggered_this_seats_turn_not_another_seats_of_the_same_run_id(
        seat, other_seat, call, notes, scripted):
    prefetch(seat=other_seat, request=PrefetchRequest(run_id="run-1", ask="+1", requires_recon=True, interactions=(
        said("+1", handle="carol", name="Carol", platform="mattermost"),)))
    prefetch(seat=seat, request=PrefetchRequest(run_id="run-1", ask="+1", requires_recon=True, interactions=(
        said("+1", handle="dave", name="Dave", platform="mattermost"),)))
    call("refresh_memory", context_hint="billing export for dave")
    assert filter_calls()[-1]["inputs"].triggered_by == ["Dave (mattermost)"]
    call("refresh_memory", context_hint="billing export again", target=other_seat)
    assert RefreshLedger.objects.filter(run_id="run-1").count() == 2  # one ledger per seat's run


def test_refresh_needs_a_run_id_and_a_hint(seat, call):
    with pytest.raises(BadInput) as err:
        call("refresh_memory", context_hint="x", run_id="")
    assert err.value.extra["field"] == "run_id"
    with pytest.raises(BadInput) as err:
        call("refresh_memory", context_hint="   ")
    assert err.value.extra["field"] == "arguments.context_hint"


def test_with_no_notes_to_pick_from_no_filter_call_is_made_and_no_slot_is_spent(seat, call, scripted):
    for i in range(4):  # more than the cap of 3
        empty = call("refresh_memory", context_hint=f"billing export angle {i}")
        assert empty.ok and empty.data["entry_ids"] == [] and empty.data["spent"] == 0
        assert "no refresh spent" in empty.text
    assert filter_calls() == [] and spend("run-1") == 0
    assert RefreshLedger.objects.get(run_id="run-1").spent == 0
    note(seat, "The billing export runs nightly at 02:00")
    for i in range(3):  # the turn's three refreshes are all still there
        assert call("refresh_memory", context_hint=f"billing export again {i}").data["spent"] == i + 1
    assert len(filter_calls()) == 3


def test_the_notes_are_ranked_by_the_hints_words_while_it_embeds(seat, call, notes, monkeypatch):
    """A ranking by words needs no vector: it runs while the hint embeds, and the pool uses it."""
    from tests.embed_waits import ranked_while_embedding

    result, meanwhile, ranked = ranked_while_embedding(
        {"agent_diary"}, monkeypatch, lambda: call("refresh_memory", context_hint="the billing export fact"))

    assert meanwhile is True
    assert ranked == ["agent_diary"]  # the pool used that ranking
    assert result.ok and "billing export fact" in result.text
