"""Episodist: one raw episode per turn, one text embedded whole, schedules named, compacted rows untouched."""

from unittest import mock

from django.utils import timezone

from core import events
from core.providers.embeddings import embed_one
from core.vectors import cosine
from learning.events import EpisodeWritten, ReflectionCompleted
from learning.memory import episodes
from learning.models import Episode
from learning.reflection import reflect_turn
from learning.reflection.workers import episodist
from tests.learning.reflection.conftest import human


def test_one_episode_per_turn_with_the_specs_fields(seat, make_turn):
    turn = make_turn(work_item="jira:PLAT-9", skills_offered=[], tool_sequence=["a", "b"], tools_called=["a", "a", "b"])
    reflect_turn(turn.pk)
    ep = Episode.objects.get()
    assert (ep.kind, ep.run_id, ep.work_key, ep.work_item) == ("raw", turn.run_id, turn.work_key, "jira:PLAT-9")
    assert ep.task_summary == "Message from Maya: Slack message"
    assert ep.ask == "Maya: Thanks! I prefer short bullet-point status updates."  # the sender named
    assert ep.plan_summary.startswith("Replied") and ep.tool_sequence == ["a", "b"]
    assert ep.review_outcome == "done" and ep.duration_ms == 120000 and ep.conversation_kind == "chat"
    assert events.rows(EpisodeWritten, seat=seat).first().payload["episode_id"] == ep.pk


def test_the_vector_is_of_one_text_label_ask_and_what_it_did(seat, make_turn):
    reflect_turn(make_turn().pk)
    ep = Episode.objects.get()
    text = episodes.embed_text(label=ep.task_summary, ask=ep.ask, what_it_did=ep.plan_summary)
    assert cosine(ep.embedding, embed_one(text).vector) > 0.999
    assert cosine(ep.embedding, embed_one(ep.task_summary).vector) < 0.9


def test_a_long_text_is_embedded_whole_split_and_pooled(seat, make_turn):
    long_ask = " ".join(f"word{i}" for i in range(1500))  # ~13,000 characters: many pieces, inside the cap
    reflect_turn(make_turn(interactions=[human(long_ask)]).pk)
    ep = Episode.objects.get()
    assert ep.ask == f"Maya: {long_ask}" and ep.embedding is not None and ep.embedding_dim == 256
    assert ep.pieces.count() > 1  # the one long line is searched piece by piece too


def test_an_unembeddable_turn_is_stored_without_a_vector(seat, make_turn):
    from core.providers.embeddings.base import EmbedResult

    def timed_out(texts, **kwargs):
        return [EmbedResult(None, "hashing-256", "timeout") for _ in texts]

    with mock.patch.object(episodist, "embed_many", timed_out):
        reflect_turn(make_turn().pk)
    ep = Episode.objects.get()
    assert ep.embedding is None and ep.embedding_model == "" and not ep.pieces.exists()


def test_a_wake_with_no_interactions_stores_the_ask_the_record_carries(seat, make_turn):
    reflect_turn(make_turn(interactions=[], ask="dee asked: is the fix deployed?").pk)
    assert Episode.objects.get().ask == "dee asked: is the fix deployed?"


def test_a_tracker_subject_that_is_part_of_what_was_sent_leads_the_ask(seat, make_turn):
    turn = make_turn(label="PLAT-88: Webhook retries", subject_is_label=False, interactions=[human("Can you reproduce it?")])
    reflect_turn(turn.pk)
    assert Episode.objects.get().ask == "PLAT-88: Webhook retries\nMaya: Can you reproduce it?"


def test_a_scheduled_turns_label_names_its_schedule_never_the_fires_run_id(seat, make_turn):
    for n in (1, 2):
        turn = make_turn(
            run_id=f"fire-{n}-8f3a", conversation_kind="schedule", conversation_id="schedule:weekly-report",
            schedule="weekly-report", label=f"Scheduled run fire-{n}-8f3a fired", interactions=[], ask="weekly report",
        )
        reflect_turn(turn.pk)
    labels = set(Episode.objects.values_list("task_summary", flat=True))
    assert labels == {"ana was assigned scheduled work weekly-report"}


def test_a_schedule_name_falls_back_to_the_conversation(seat, make_turn):
    turn = make_turn(conversation_kind="cron", conversation_id="schedule:nightly-digest", interactions=[], ask="x")
    reflect_turn(turn.pk)
    assert Episode.objects.get().task_summary == "ana was assigned scheduled work nightly-digest"


def test_a_redelivered_trigger_collapses_onto_its_work_keys_episode(seat, make_turn):
    reflect_turn(make_turn(work_key="chat:msg-77", plan_summary="first run").pk)
    reflect_turn(make_turn(work_key="chat:msg-77", plan_summary="second run").pk)
    ep = Episode.objects.get()
    assert ep.plan_summary == "second run"
    assert events.rows(EpisodeWritten, seat=seat).first().payload["replaced"] is True


def test_compacted_rows_are_never_touched_or_embedded(seat, make_turn):
    now = timezone.now()
    compacted = Episode.objects.create(
        seat=seat, kind=Episode.COMPACTED, work_key="chat:msg-5", started_at=now, ended_at=now, count=12
    )
    reflect_turn(make_turn(work_key="chat:msg-5").pk)
    compacted.refresh_from_db()
    assert compacted.embedding is None and compacted.count == 12 and compacted.plan_summary == ""
    assert Episode.objects.filter(kind=Episode.RAW).count() == 1


def test_unsettled_turns_are_episodes_too(seat, make_turn):
    reflect_turn(make_turn(review_outcome="self_iterate").pk)
    assert Episode.objects.get().review_outcome == "self_iterate"


def test_the_pass_record_carries_each_workers_own_result_fields(seat, make_turn):
    turn = make_turn()
    reflect_turn(turn.pk)
    workers = events.latest(ReflectionCompleted, seat=seat).event.workers
    episode = Episode.objects.get()
    assert workers["episodist"].result == {"episode_id": episode.pk, "replaced": False, "embedded": True}
    decided = workers["persist_decider"].result
    assert decided["classification"] in ("LONG", "SHORT", "NOOP") and "duplicate_of" not in decided

