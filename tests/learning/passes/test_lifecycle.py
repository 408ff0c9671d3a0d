from dataclasses import replace
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.models import Event
from core.providers.errors import TransientError
from core.providers.llm.scripted import ScriptedProvider
from crewlet.config import schema
from learning.models import Episode, SynthesizedSkill
from learning.passes import lifecycle
from tests.learning.passes.conftest import episode

pytestmark = pytest.mark.django_db


@pytest.fixture
def knobs(serve_config):
    """Serve lifecycle knobs with a low threshold so a handful of rows makes a seat due."""

    def _serve(**overrides):
        values = {"max_raw_episodes_per_agent": 3, **overrides}
        learning = replace(schema.Learning(), episode_lifecycle=replace(schema.EpisodeLifecycle(), **values))
        return serve_config(learning=learning)

    _serve()
    return _serve


def filler(seat, now, n=4):
    """Young settled tool-using turns: they make the seat due and are touched by nothing."""
    return [episode(seat, age_days=1, now=now, tools=(f"young{i}",)) for i in range(n)]


def ids(**filters):
    return set(Episode.objects.filter(**filters).values_list("id", flat=True))


def test_a_seat_under_its_threshold_costs_one_count_and_is_not_touched(seat, serve_config, now):
    old = episode(seat, age_days=400, now=now, outcome="self_iterate")
    seat = type(seat).objects.select_related("role", "company").get(pk=seat.pk)
    with CaptureQueriesContext(connection) as queries:
        report = lifecycle.lifecycle_for_seat(seat, now=now)
    assert report["due"] is False and len(queries) == 1 and "count" in queries[0]["sql"].lower()
    assert Episode.objects.filter(pk=old.pk).exists()


def test_non_terminal_turns_are_dropped_after_their_horizon(seat, knobs, now):
    filler(seat, now)
    old = episode(seat, age_days=15, now=now, outcome="self_iterate")
    young = episode(seat, age_days=13, now=now, outcome="self_iterate")
    settled = episode(seat, age_days=15, now=now, outcome="done")
    report = lifecycle.run_lifecycle(now=now)
    assert report["non_terminal_dropped"] == 1
    assert not Episode.objects.filter(pk=old.pk).exists()
    assert Episode.objects.filter(pk__in=[young.pk, settled.pk]).count() == 2


def test_tool_free_turns_are_dropped_after_ninety_days_and_counted_alone(seat, knobs, now):
    filler(seat, now)
    old = episode(seat, age_days=91, now=now, tools=())
    kept = episode(seat, age_days=89, now=now, tools=())
    report = lifecycle.run_lifecycle(now=now)
    assert report["tool_free_dropped"] == 1 and report["non_terminal_dropped"] == 0
    assert not Episode.objects.filter(pk=old.pk).exists() and Episode.objects.filter(pk=kept.pk).exists()
    passed = Event.objects.get(name="episode_lifecycle_pass")
    assert passed.payload["tool_free_dropped"] == 1
    completed = Event.objects.get(name="compaction_completed")
    assert completed.payload["non_terminal_dropped"] == 1  # the spec's fold of the tool-free count


def test_consolidated_turns_are_dropped_after_the_grace(seat, knobs, now):
    filler(seat, now)
    skill = SynthesizedSkill.objects.create(seat=seat, name="fix-build", description="d", body="b", created_at=now)
    past = episode(seat, age_days=40, now=now, consolidated_into_skill=skill, consolidated_at=now - timedelta(days=31))
    grace = episode(seat, age_days=40, now=now, consolidated_into_skill=skill, consolidated_at=now - timedelta(days=29))
    report = lifecycle.run_lifecycle(now=now)
    assert report["consolidated_dropped"] == 1
    assert not Episode.objects.filter(pk=past.pk).exists()
    assert Episode.objects.get(pk=grace.pk).kind == Episode.RAW  # in grace, and never compacted meanwhile


def similar_cluster(seat, now, n, *, age=40, tools=("git_clone", "run_tests", "open_pr"), **fields):
    return [episode(seat, age_days=age + i, now=now, tools=tools, run_id=f"run-{age}-{i}", **fields) for i in range(n)]


def test_compaction_folds_a_cluster_keeping_two_exemplars_raw_and_referenced(seat, knobs, now):
    filler(seat, now)
    members = similar_cluster(seat, now, 4)
    loner = episode(seat, age_days=45, now=now, tools=("page_oncall",))
    report = lifecycle.run_lifecycle(now=now)
    assert report["clusters_folded"] == 1 and report["episodes_compacted"] == 4
    compacted = Episode.objects.get(kind=Episode.COMPACTED)
    assert compacted.count == 4 and compacted.success_rate == 1.0 and compacted.embedding is None
    assert compacted.common_task_pattern and compacted.started_at == min(m.started_at for m in members)
    exemplars = Episode.objects.filter(is_exemplar=True, kind=Episode.RAW)
    assert exemplars.count() == 2
    assert sorted(compacted.exemplar_turn_ids) == sorted(e.run_id for e in exemplars)
    assert ids(run_id__startswith="run-40-") == set(exemplars.values_list("id", flat=True))
    assert Episode.objects.filter(pk=loner.pk).exists()
    assert Event.objects.filter(name="compaction_requested", payload__cluster_size=4).count() == 1
    assert Event.objects.filter(name="compaction_completed").count() == 1


def test_a_large_cluster_keeps_three_exemplars_and_a_small_one_stays_raw(seat, knobs, now):
    filler(seat, now)
    similar_cluster(seat, now, 7)
    pair = similar_cluster(seat, now, 2, age=60, tools=("kubectl", "grafana"))
    lifecycle.run_lifecycle(now=now)
    compacted = Episode.objects.get(kind=Episode.COMPACTED)
    assert len(compacted.exemplar_turn_ids) == 3
    assert ids(pk__in=[p.pk for p in pair], kind=Episode.RAW, is_exemplar=False) == {p.pk for p in pair}


def test_compaction_takes_only_old_settled_tool_using_turns_never_exemplars(seat, knobs, now):
    filler(seat, now)
    young = similar_cluster(seat, now, 3, age=10)
    tool_free = [episode(seat, age_days=50 + i, now=now, tools=()) for i in range(3)]
    anchors = similar_cluster(seat, now, 3, age=70, is_exemplar=True)
    report = lifecycle.run_lifecycle(now=now)
    assert report["clusters_folded"] == 0
    kept = [*young, *tool_free, *anchors]
    assert Episode.objects.filter(pk__in=[e.pk for e in kept]).count() == len(kept)


def test_members_long_task_or_outcome_is_condensed_and_labelled_never_cut(seat, role, knobs, now):
    role.llm_auxiliary = ["scripted"]
    role.save()
    filler(seat, now)
    long_outcome = "The nightly export failed because the disk was full. " * 8  # ~430 bytes
    similar_cluster(seat, now, 3, plan_summary=long_outcome)
    ScriptedProvider.queue("condense", "Export failed: disk full.", TransientError("down"), "Export failed: disk.")
    lifecycle.run_lifecycle(now=now)
    summary_call = next(c for c in ScriptedProvider.calls if c["purpose"] == "compaction_summary")
    outcomes = sorted(m["outcome"] for m in summary_call["inputs"].members)
    assert outcomes.count(long_outcome.strip()) == 1  # the rewrite that failed is carried whole
    assert sum(o.endswith("(condensed)") for o in outcomes) == 2
    prompt = summary_call["messages"][1]["content"]
    assert "(condensed)" in prompt and long_outcome.strip() in prompt


def test_an_unparseable_summary_leaves_the_cluster_raw(seat, role, knobs, now):
    role.llm_auxiliary = ["scripted"]
    role.save()
    filler(seat, now)
    members = similar_cluster(seat, now, 3)
    ScriptedProvider.queue("compaction_summary", "I would rather not.")
    report = lifecycle.run_lifecycle(now=now)
    assert report["compaction_failed"] == 1 and not Episode.objects.filter(kind=Episode.COMPACTED).exists()
    assert Episode.objects.filter(pk__in=[m.pk for m in members], is_exemplar=False).count() == 3


def test_with_no_auxiliary_model_anywhere_the_pass_does_not_run(seat, serve_config, now):
    learning = replace(schema.Learning(), episode_lifecycle=replace(schema.EpisodeLifecycle(), max_raw_episodes_per_agent=1))
    serve_config(learning=learning, providers=schema.Providers(llm={}))
    rows = [episode(seat, age_days=200, now=now, outcome="self_iterate", tools=()) for _ in range(3)]
    report = lifecycle.run_lifecycle(now=now)
    assert report["ran"] is False and "no auxiliary model" in report["why"]
    assert Episode.objects.filter(pk__in=[r.pk for r in rows]).count() == 3
    assert not Event.objects.filter(name="episode_lifecycle_pass").exists()


def test_ancient_compacted_rows_are_evicted_with_their_exemplars_only_when_set(seat, knobs, now):
    filler(seat, now)
    old = episode(seat, age_days=400, now=now, kind=Episode.COMPACTED, count=9, exemplar_turn_ids=["run-x", "run-y"])
    anchors = [episode(seat, age_days=400, now=now, run_id=r, is_exemplar=True) for r in ("run-x", "run-y")]
    assert lifecycle.run_lifecycle(now=now)["compacted_evicted"] == 0  # 0 = off
    assert Episode.objects.filter(pk=old.pk).exists()
    knobs(compacted_max_age_days=365)
    report = lifecycle.run_lifecycle(now=now)
    assert (report["compacted_evicted"], report["exemplars_evicted"]) == (1, 2)
    assert not Episode.objects.filter(pk__in=[old.pk, *[a.pk for a in anchors]]).exists()


def test_a_dry_run_reports_the_same_counts_and_changes_nothing(seat, knobs, now):
    filler(seat, now)
    episode(seat, age_days=15, now=now, outcome="self_iterate")
    similar_cluster(seat, now, 3)
    before = Episode.objects.count()
    report = lifecycle.run_lifecycle(now=now, dry_run=True)
    assert report["non_terminal_dropped"] == 1 and report["episodes_compacted"] == 3
    assert Episode.objects.count() == before and not Event.objects.filter(name__startswith="compaction").exists()


def test_similarity_recall_stays_raw_while_time_window_reads_return_both(seat, knobs, now):
    from learning.memory import episodes

    filler(seat, now)
    similar_cluster(seat, now, 4)
    lifecycle.run_lifecycle(now=now)
    kinds = {e.kind for e in episodes.recent(seat=seat, limit=50)}
    assert kinds == {Episode.RAW, Episode.COMPACTED}
    assert episodes.unreachable_count(seat=seat, model="hashing-256", dim=256) == episodes.raw(seat).count()


class Killed(BaseException):
    """The queue's timeout kill, as the pass sees it: nothing inside the pass catches it."""


def test_a_pass_killed_after_two_seats_every_tick_still_reaches_all_five_within_three_ticks(
        company, role, unit, knobs, now, monkeypatch):
    from tests.factories import SeatFactory

    seats = [SeatFactory(company=company, role=role, unit=unit, handle=f"s{i}") for i in range(5)]
    for s in seats:
        filler(s, now)
    real, reached, begun = lifecycle.lifecycle_for_seat, [], []

    def dies_at_the_third_seat(seat, **kwargs):
        begun.append(seat.handle)
        if len(begun) % 3 == 0:
            raise Killed
        report = real(seat, **kwargs)
        reached.append(report["seat"])
        return report

    monkeypatch.setattr(lifecycle, "lifecycle_for_seat", dies_at_the_third_seat)
    for _tick in range(3):
        with pytest.raises(Killed):
            lifecycle.run_lifecycle(now=now)
    assert sorted(set(reached)) == ["s0", "s1", "s2", "s3", "s4"]
    # each tick resumed after the seat the last one died on, and took that seat last
    assert begun == ["s0", "s1", "s2", "s3", "s4", "s0", "s1", "s2", "s3"]
    monkeypatch.setattr(lifecycle, "lifecycle_for_seat", real)
    assert lifecycle.run_lifecycle(now=now)["seats"] == 5  # a tick that finishes clears the cursor
    assert [r["seat"] for r in lifecycle.run_lifecycle(now=now)["results"]] == ["s0", "s1", "s2", "s3", "s4"]
