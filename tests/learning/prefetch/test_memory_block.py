"""## Personal memory: the hybrid pool, use counting on selection only, the filter's inputs."""

import json

from core.models import Event
from core.providers.embeddings import embed_one
from core.providers.errors import TransientError
from core.providers.llm.scripted import ScriptedProvider
from learning.memory import diary
from learning.models import DiaryEntry
from learning.prefetch.hints import EmptyMemoryHint
from tests.learning.memory.rows import note

from .conftest import aux_spend, block

ASK = "when does the billing export run"


def _hybrid_diary(seat):
    topical = note(seat, "The billing export runs nightly at 02:00", days_ago=500)
    for i in range(55):
        note(seat, f"Filler observation number {i} about lunch", days_ago=300 - i)
    rule = note(seat, "Use semantic commit messages on every PR", days_ago=200)
    return topical, rule


def _scripted(role):
    role.llm_auxiliary = ["scripted"]
    role.save()


def _filter_calls():
    return [c for c in ScriptedProvider.calls if c["purpose"] == "memory_relevance_filter"]


def test_pool_is_recall_union_recent_old_rule_by_recency_topical_by_vector(seat, role, run):
    _scripted(role)
    topical, rule = _hybrid_diary(seat)
    vec = embed_one(ASK).vector
    assert topical.id in [e.id for e in diary.recall(seat=seat, vector=vec, model="hashing-256")]
    assert topical.id not in [e.id for e in diary.recent(seat=seat)]
    assert rule.id not in [e.id for e in diary.recall(seat=seat, vector=vec, model="hashing-256")]
    result = run(ask=ASK)
    ids = [c["id"] for c in _filter_calls()[0]["inputs"].candidates]
    assert topical.id in ids and rule.id in ids and len(ids) == len(set(ids)) <= 100
    text = block(result, "personal_memory")["text"]
    assert "The billing export runs nightly at 02:00" in text and "semantic commit messages" in text


def test_only_selected_notes_count_as_used(seat, role, run):
    _scripted(role)
    topical, rule = _hybrid_diary(seat)
    ScriptedProvider.queue("memory_relevance_filter", json.dumps({"selected": [rule.id, 999999]}))
    result = run(ask=ASK)
    used = dict(DiaryEntry.objects.filter(seat=seat).values_list("id", "use_count"))
    assert used[rule.id] == 1
    assert used[topical.id] == 0  # a candidate the filter did not select is not a use
    assert sum(used.values()) == 1  # and an invented id is dropped
    assert block(result, "personal_memory")["text"] == "## Personal memory\n- Use semantic commit messages on every PR"


def _live_reads(monkeypatch) -> list:
    """The calls of the gate path's has-a-live-note read."""
    calls: list = []
    real = diary.has_live
    monkeypatch.setattr(diary, "has_live", lambda *a, **k: calls.append(a) or real(*a, **k))
    return calls


def test_filter_choosing_nothing_renders_the_hint_for_a_seat_with_notes(seat, role, run, monkeypatch):
    _scripted(role)
    note(seat, "Ana prefers digests")
    ScriptedProvider.queue("memory_relevance_filter", '{"selected": []}')
    live_reads = _live_reads(monkeypatch)
    assert EmptyMemoryHint in block(run(ask="deploy the thing"), "personal_memory")["text"]
    assert live_reads == []  # the pool just read says the seat holds a live note: not read again


def test_a_thin_trigger_reads_whether_the_seat_holds_a_live_note(seat, run, monkeypatch):
    note(seat, "Ana prefers digests")
    live_reads = _live_reads(monkeypatch)
    assert EmptyMemoryHint in block(run(ask="+1", requires_recon=True), "personal_memory")["text"]
    assert len(live_reads) == 1


def test_a_failed_filter_is_answered_offline_says_so_and_records_the_failed_attempt(seat, role, run):
    _scripted(role)
    entry = note(seat, "The billing export runs nightly at 02:00")
    ScriptedProvider.queue("memory_relevance_filter", TransientError("503"))
    result = run(ask=ASK)
    assert block(result, "personal_memory")["text"] == "## Personal memory\n- The billing export runs nightly at 02:00"
    assert result["summary"]["model_fallbacks"] == {"memory_relevance_filter": "transient"}
    entry.refresh_from_db()
    assert entry.use_count == 1
    (row,) = Event.objects.filter(name="auxiliary_spend", turn_id=result["run_id"], payload__purpose="memory_relevance_filter")
    assert (row.payload["outcome"], row.payload["input_tokens"], row.payload["output_tokens"]) == ("transient", 0, 0)


def test_a_seat_with_no_notes_shows_no_memory_block_and_makes_no_filter_call(seat, run):
    result = run(ask=ASK)
    assert block(result, "personal_memory")["text"] == ""
    assert aux_spend(result["run_id"], "memory_relevance_filter") == 0


def test_expired_short_note_is_not_a_candidate(seat, role, run):
    _scripted(role)
    live = note(seat, "Billing export freeze this week", kind=DiaryEntry.SHORT, ttl_days=3)
    gone = note(seat, "Billing export moved to 03:00", kind=DiaryEntry.SHORT, ttl_days=1)
    DiaryEntry.objects.filter(id=gone.id).update(ttl_until=live.created_at.replace(year=2000))
    run(ask=ASK)
    ids = [c["id"] for c in _filter_calls()[0]["inputs"].candidates]
    assert live.id in ids and gone.id not in ids
