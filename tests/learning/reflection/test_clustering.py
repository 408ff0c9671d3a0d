"""Clustered synthesis: the largest unlearned cluster, one draft per seat per pass, a real representative."""

import json
from datetime import timedelta

from django.utils import timezone

from core import events
from core.models import Event
from crewlet.config import schema
from learning.events import SkillSynthesized
from learning.memory import skills
from learning.models import Episode, SynthesizedSkill
from learning.passes.clustering import greedy_clusters, run_clustered_synthesis

TRIAGE = ["search_logs", "read_dashboard", "search_logs", "query_metrics", "open_ticket", "post_alert_note"]
RELEASE = ["jira_get_issue", "git_checkout", "git_create_branch", "run_tests", "jira_transition"]
DEPLOY = ["kubectl_get", "kubectl_apply", "kubectl_rollout", "grafana_query", "mattermost_post_message"]


def episode(seat, tools, *, ask="Alert: cache memory high", outcome="done", kind=Episode.RAW, age_minutes=0):
    at = timezone.now() - timedelta(minutes=age_minutes)
    return Episode.objects.create(seat=seat, kind=kind, tool_sequence=tools, ask=ask, review_outcome=outcome,
                                  task_summary="Alert", plan_summary="Handled it.", started_at=at, ended_at=at)


def test_the_largest_cluster_is_drafted_with_a_real_run_as_its_tool_sequence(seat):
    members = [episode(seat, TRIAGE[:i] + TRIAGE[i:], age_minutes=i) for i in range(4)]
    permuted = episode(seat, list(reversed(TRIAGE)), age_minutes=9)
    for i in range(3):
        episode(seat, RELEASE, ask="Cut the release branch", age_minutes=20 + i)
    result = run_clustered_synthesis(seat=seat)
    assert result["drafted"] == 1
    skill = SynthesizedSkill.objects.get()
    assert skill.trigger == "clustered" and skill.tool_sequence == members[0].tool_sequence
    consolidated = set(Episode.objects.filter(consolidated_into_skill=skill).values_list("id", flat=True))
    assert consolidated == {m.id for m in members} | {permuted.id}
    event = events.rows(SkillSynthesized, seat=seat).first()
    assert event.payload["trigger"] == "clustered" and event.payload["cluster_size"] == 5 and event.turn_id == ""


def test_one_draft_per_seat_per_pass_then_the_next_pattern_the_next_day(seat):
    for i in range(4):
        episode(seat, TRIAGE, age_minutes=i)
    for i in range(3):
        episode(seat, RELEASE, ask="Cut the release branch", age_minutes=10 + i)
    run_clustered_synthesis(seat=seat)
    assert SynthesizedSkill.objects.count() == 1
    second = run_clustered_synthesis(seat=seat)  # the triage cluster is learned: skipped, not a stop
    assert SynthesizedSkill.objects.count() == 2 and second["results"][0]["already_learned"] == 1
    first, later = SynthesizedSkill.objects.order_by("id").values_list("tool_sequence", flat=True)
    assert (first, later) == (TRIAGE, RELEASE)  # the strongest evidence went first
    third = run_clustered_synthesis(seat=seat)
    assert third["drafted"] == 0 and third["results"][0]["why"] == "no_cluster"


def test_a_cluster_below_min_size_is_not_drafted(seat):
    for i in range(2):
        episode(seat, TRIAGE, age_minutes=i)
    assert run_clustered_synthesis(seat=seat)["results"][0]["why"] == "no_cluster"


def test_only_raw_settled_turns_with_enough_tools_are_evidence(seat):
    episode(seat, TRIAGE, kind=Episode.COMPACTED)
    episode(seat, TRIAGE, outcome="self_iterate")
    episode(seat, TRIAGE[:4])  # three distinct tools
    episode(seat, TRIAGE, age_minutes=1)
    episode(seat, TRIAGE, age_minutes=2)
    assert run_clustered_synthesis(seat=seat)["results"][0]["why"] == "no_cluster"
    episode(seat, TRIAGE, outcome="failed", age_minutes=3)
    assert run_clustered_synthesis(seat=seat)["drafted"] == 1


def test_min_tool_calls_counts_distinct_tools_not_repeated_calls(seat):
    for i in range(3):
        episode(seat, ["search_logs", "open_ticket"] * 3, age_minutes=i)  # six calls of two tools, three times
    assert run_clustered_synthesis(seat=seat)["results"][0]["why"] == "no_cluster"


def test_an_archived_skill_counts_for_the_cap(seat, serve_config):
    archived = skills.create(seat=seat, name="old-procedure", description="d", body="b", trigger="inline", tool_sequence=["x"])
    SynthesizedSkill.objects.filter(pk=archived.pk).update(state=SynthesizedSkill.ARCHIVED)
    serve_config(learning=schema.Learning(skill_synthesis=schema.SkillSynthesis(max_skills_per_agent=1)))
    for i in range(3):
        episode(seat, RELEASE, ask="Cut the release branch", age_minutes=i)
    assert run_clustered_synthesis(seat=seat)["results"][0]["why"] == "max_skills_per_agent"


def test_an_archived_skill_counts_for_the_duplicate_check(seat):
    archived = skills.create(seat=seat, name="cut-release", description="d", body="b", trigger="inline", tool_sequence=RELEASE)
    SynthesizedSkill.objects.filter(pk=archived.pk).update(state=SynthesizedSkill.ARCHIVED)
    for i in range(3):
        episode(seat, RELEASE, ask="Cut the release branch", age_minutes=i)
    result = run_clustered_synthesis(seat=seat)["results"][0]
    assert (result["why"], result["already_learned"]) == ("no_cluster", 1)  # an archived procedure is not re-drafted


def test_only_the_last_episode_fetch_limit_turns_are_read(seat, serve_config):
    serve_config(learning=schema.Learning(skill_synthesis=schema.SkillSynthesis(episode_fetch_limit=4)))
    for i in range(3):
        episode(seat, TRIAGE, age_minutes=100 + i)  # older than the window
    for i in range(4):
        episode(seat, [f"t{i}_{j}" for j in range(5)], age_minutes=i)
    assert run_clustered_synthesis(seat=seat)["results"][0]["why"] == "no_cluster"


def test_greedy_clusters_pool_at_the_cluster_threshold(seat):
    a = episode(seat, ["a", "b", "c", "d", "e"])
    b = episode(seat, ["a", "b", "c", "d", "f"])  # 4/6 = 0.67 >= 0.6
    c = episode(seat, ["a", "b", "x", "y", "z"])
    clusters = greedy_clusters([a, b, c], 0.6)
    assert [cl.size for cl in clusters] == [2, 1] and clusters[0].representative == a


def test_a_seat_with_nothing_to_cluster_costs_no_call(seat, scripted):
    run_clustered_synthesis(seat=seat)
    assert [c for c in scripted.calls if c["purpose"] == "skill_draft"] == []


def test_an_incomplete_draft_is_rejected_and_nothing_is_stamped(seat, scripted):
    for i in range(3):
        episode(seat, TRIAGE, age_minutes=i)
    scripted.queue("skill_draft", json.dumps({"name": "triage", "summary": "", "body": "# x"}))
    result = run_clustered_synthesis(seat=seat)
    assert "the draft leaves summary empty" in result["results"][0]["why"]
    assert not Episode.objects.filter(consolidated_into_skill__isnull=False).exists()
    assert not Event.objects.filter(name="skill_synthesized").exists()


def test_every_active_seat_is_walked_and_one_failure_costs_no_other(seat, other_seat, monkeypatch):
    for s in (seat, other_seat):
        for i in range(3):
            episode(s, TRIAGE, age_minutes=i)
    from learning.passes import clustering

    real = clustering._draft

    def flaky(s, cluster, *, now):
        if s.pk == seat.pk:
            raise RuntimeError("provider down")
        return real(s, cluster, now=now)

    monkeypatch.setattr(clustering, "_draft", flaky)
    result = run_clustered_synthesis()
    assert result["seats"] == 2 and result["drafted"] == 1
    assert SynthesizedSkill.objects.get().seat == other_seat


def test_clustered_and_inline_share_the_skill_draft_purpose(seat, scripted):
    for i in range(3):
        episode(seat, RELEASE, ask="Cut the release branch for 4.2", age_minutes=i)
    skills_before = skills.catalogue(seat).count()
    run_clustered_synthesis(seat=seat)
    call = next(c for c in scripted.calls if c["purpose"] == "skill_draft")
    assert call["inputs"].mode == "cluster" and call["inputs"].cluster_size == 3
    assert "3 of the agent's recent turns ran this same shape" in call["messages"][1]["content"]
    assert skills.catalogue(seat).count() == skills_before + 1
    assert SynthesizedSkill.objects.get().name == "create-release-branch"


def test_a_dry_run_names_the_cluster_each_seat_would_offer_and_asks_no_model(seat, scripted):
    from io import StringIO

    from django.core.management import call_command

    for i in range(3):
        Episode.objects.filter(pk=episode(seat, ["query_episodes", *TRIAGE], age_minutes=i).pk).update(run_id=f"alert-{i}")
    out = StringIO()
    call_command("run_pass", "clustering", "--dry-run", stdout=out)
    text = out.getvalue()
    assert "would_offer: 1" in text and text.strip().endswith("would change: would_offer=1")
    seat_line = next(line for line in text.splitlines() if line.startswith(f"  {seat.handle}: "))
    assert "cluster_size: 3" in seat_line and f"tools: [{', '.join(TRIAGE)}]" in seat_line  # the steps of the work
    assert "turns: [alert-0, alert-1, alert-2]" in seat_line
    assert not SynthesizedSkill.objects.exists() and scripted.calls == []
    assert not Episode.objects.filter(consolidated_into_skill__isnull=False).exists()
