"""PersistDecider: applicability, the four tiers, recent notes shown, the 2,000-character refusal."""

import json
from datetime import timedelta

from django.utils import timezone

from core import events
from learning.events import PersistDeciderCompleted
from learning.memory import diary
from learning.models import DiaryEntry
from learning.purposes import persist_decision
from learning.reflection import reflect_turn
from learning.reflection.workers import persist_decider
from tests.learning.reflection.conftest import human


def _answer(**fields):
    base = {"classification": "NOOP", "content": "", "ttl_days": None, "reason": "r"}
    return json.dumps({**base, **fields})


def test_runs_on_done_and_failed_never_on_self_iterate(make_turn, ctx_of):
    assert persist_decider.PersistDecider().applies(ctx_of(make_turn(review_outcome="done"))) is None
    assert persist_decider.PersistDecider().applies(ctx_of(make_turn(review_outcome="failed", failure_set_by="reviewer"))) is None
    assert persist_decider.PersistDecider().applies(ctx_of(make_turn(review_outcome="self_iterate"))) == "unsettled"


def test_skipped_when_the_turn_already_self_persisted(make_turn, ctx_of):
    assert persist_decider.PersistDecider().applies(ctx_of(make_turn(self_persisted=True))) == "self_persisted"


def test_skipped_without_an_auxiliary_model(seat, make_turn, ctx_of):
    seat.role.llm_auxiliary, seat.role.llm = [], []
    seat.role.save()
    assert persist_decider.PersistDecider().applies(ctx_of(make_turn())) == "no_auxiliary_model"


def test_a_stated_preference_becomes_a_long_declarative_fact(seat, make_turn):
    reflect_turn(make_turn().pk)
    entry = DiaryEntry.objects.get()
    assert entry.kind == DiaryEntry.LONG and entry.ttl_until is None and entry.source == "persist_decider"
    assert entry.content == "Maya prefers short bullet-point status updates."
    event = events.rows(PersistDeciderCompleted, seat=seat).first()
    assert event.payload["classification"] == "LONG" and event.payload["ttl_until"] is None


def test_a_dated_situation_becomes_a_short_note_expiring_on_that_date(seat, make_turn):
    end = (timezone.now() + timedelta(days=6)).date()
    turn = make_turn(interactions=[human(f"Heads up: the sprint freeze runs through {end.isoformat()}.")])
    reflect_turn(turn.pk)
    entry = DiaryEntry.objects.get()
    assert entry.kind == DiaryEntry.SHORT
    assert entry.content == f"The sprint freeze runs through {end.isoformat()}."
    assert entry.ttl_until.date() == end + timedelta(days=1)
    event = events.rows(PersistDeciderCompleted, seat=seat).first()
    assert event.payload["classification"] == "SHORT" and event.payload["ttl_until"].startswith(str(end + timedelta(days=1)))


def test_a_short_note_is_gone_from_reads_once_its_ttl_passes(seat, make_turn):
    turn = make_turn(interactions=[human("I'm out of office tomorrow.")])
    reflect_turn(turn.pk)
    entry = DiaryEntry.objects.get()
    assert [e.id for e in diary.recent(seat=seat)] == [entry.id]
    later = entry.ttl_until + timedelta(seconds=1)
    assert diary.recent(seat=seat, now=later) == []
    assert diary.sweep_expired(now=later) == 1


def test_doc_is_logged_as_a_recommendation_and_writes_nothing(seat, make_turn):
    turn = make_turn(interactions=[human("Team convention: everyone should tag releases from main.")])
    reflect_turn(turn.pk)
    assert not DiaryEntry.objects.exists()
    event = events.rows(PersistDeciderCompleted, seat=seat).first()
    assert event.payload["classification"] == "DOC" and "tag releases" in event.payload["recommendation"]


def test_noop_is_the_default(seat, make_turn):
    reflect_turn(make_turn(interactions=[human("Can you check the build?")]).pk)
    assert not DiaryEntry.objects.exists()
    assert events.rows(PersistDeciderCompleted, seat=seat).first().payload["classification"] == "NOOP"


def test_recent_notes_are_shown_and_a_repeat_is_not_written_again(seat, make_turn, scripted):
    diary.write(seat=seat, content="Maya prefers short bullet-point status updates.", kind=DiaryEntry.LONG)
    reflect_turn(make_turn().pk)
    assert DiaryEntry.objects.count() == 1
    prompt = next(c for c in scripted.calls if c["purpose"] == "persist_decision")["messages"][1]["content"]
    assert "recent notes (do not repeat one)" in prompt and "- Maya prefers short bullet-point status updates." in prompt


def test_at_most_fifty_recent_notes_are_shown(seat, ctx_of, make_turn):
    DiaryEntry.objects.bulk_create(
        [DiaryEntry(seat=seat, kind=DiaryEntry.LONG, content=f"fact {i}", created_at=timezone.now()) for i in range(60)]
    )
    inputs = persist_decider.build_inputs(ctx_of(make_turn()), reflect=False)
    assert len(inputs.recent_notes) == 50


def test_a_note_over_two_thousand_characters_is_skipped_and_logged_never_trimmed(seat, make_turn, scripted, caplog):
    scripted.queue("persist_decision", _answer(classification="LONG", content="Maya prefers " + "x" * 2000))
    reflect_turn(make_turn().pk)
    assert not DiaryEntry.objects.exists()
    payload = events.rows(PersistDeciderCompleted, seat=seat).first().payload
    assert payload["classification"] == "LONG" and payload["skipped"] == "learning.MaxContentChars"
    assert payload["size"] == 2013 and "2000" in caplog.text


def test_a_note_of_exactly_two_thousand_characters_is_stored_whole(seat, make_turn, scripted):
    content = "Maya prefers short status updates: " + "y" * 1965
    scripted.queue("persist_decision", _answer(classification="LONG", content=content))
    reflect_turn(make_turn().pk)
    assert DiaryEntry.objects.get().content == content


def test_writing_into_a_full_diary_evicts_by_use(seat, make_turn, scripted):
    now = timezone.now()
    DiaryEntry.objects.bulk_create(
        [DiaryEntry(seat=seat, kind=DiaryEntry.LONG, content=f"fact {i}", created_at=now - timedelta(days=500 - i),
                    use_count=1, last_retrieved_at=now) for i in range(500)]
    )
    never_used = DiaryEntry.objects.get(content="fact 499")
    DiaryEntry.objects.filter(pk=never_used.pk).update(use_count=0, last_retrieved_at=None)
    reflect_turn(make_turn().pk)
    assert DiaryEntry.objects.filter(kind=DiaryEntry.LONG).count() == 500
    assert not DiaryEntry.objects.filter(pk=never_used.pk).exists()  # the newest, but never once recalled
    assert DiaryEntry.objects.filter(content="fact 0").exists()  # the oldest, but used


def test_the_prompt_describes_the_turn_as_woken_by_asked_what_it_did_never_task_or_plan(seat, ctx_of, make_turn):
    ctx = ctx_of(make_turn(interactions=[], ask="Summarise the week's merged changes"))
    messages = persist_decision.render(persist_decider.build_inputs(ctx, reflect=False))
    text = "\n".join(m["content"] for m in messages)
    assert "Woken by: Message from Maya: Slack message" in text
    assert "Asked: Summarise the week's merged changes" in text and "What it did: Replied" in text
    assert "task" not in text.lower() and "plan" not in text.lower()
    assert persist_decision.WRITING_STYLE_RULE in messages[0]["content"]


def test_the_writing_style_rule_is_the_specs_verbatim():
    assert persist_decision.WRITING_STYLE_RULE == (
        'Writing-style rule: persisted entries are declarative facts, not instructions. "User prefers concise '
        'responses" ✓ — "Always respond concisely" ✗. Instructions drift out of date and get re-discovered as '
        "contradictions; facts compose cleanly."
    )


def test_each_interaction_is_shown_with_its_sender(seat, ctx_of, make_turn):
    ctx = ctx_of(make_turn(interactions=[human("first"), human("second", handle="tom", name="Tom")]))
    user = persist_decision.render(persist_decider.build_inputs(ctx, reflect=False))[1]["content"]
    assert "- Maya: first\n- Tom: second" in user
