"""Demo step: age the data by a clock the demo controls and run every background pass once.

The clock is moved 45 days past real time (``ctx.clock``) and handed to each pass as ``now=``,
so what the earlier steps wrote is a month and a half old and nothing is patched. When the
reflection step left ana too few turns to make her lifecycle due, a month's aged history is
seeded for her: mid-state rounds, chat-only turns, turns a skill absorbed, three kinds of
routine tool work, and skills the curator should age.
"""

from __future__ import annotations

import random
from datetime import timedelta

from django.core.management import call_command
from django.utils import timezone

from crewlet.models import Seat
from learning import schedules
from learning.management.commands.run_pass import changes
from learning.models import DiaryEntry, Episode, SynthesizedSkill
from learning.passes import duties

AGE_BY = timedelta(days=45)
SEED_FOR = "ana"
ROUTINES = [
    (("git_clone", "run_tests", "read_file", "edit_file", "open_pr"), "CI failure on {repo}", 130),
    (("kubectl_get", "kubectl_logs", "grafana_query", "post_message"), "Alert fired for {repo}", 100),
    (("jira_search", "jira_comment", "post_message"), "Triage ticket ENGT-{n}", 60),
]
REPOS = ["billing-api", "web-shell", "ingest-worker", "auth-gateway"]
ORDER = ("lifecycle", "curator", "clustering", "embed_fill", "retention", "promotion")


def run(ctx) -> None:
    ctx.heading("Background passes: the data aged 45 days by the demo's clock, every pass once")
    call_command("install_schedules", stdout=ctx.out)
    clock = (ctx.clock or timezone.now()) + AGE_BY
    ctx.clock = clock
    ctx.line(f"demo clock: {clock:%Y-%m-%d %H:%M} UTC (real time + {AGE_BY.days} days)")
    ana = Seat.objects.select_related("role", "company").filter(handle=SEED_FOR).first()
    if ana is not None:
        seeded = seed(ana, clock)
        if seeded:
            ctx.line(f"seeded {SEED_FOR}: {seeded}")
    for name in ORDER:
        ctx.line(f"-- {name}: {describe(name, clock)}")


def describe(name: str, clock) -> str:
    fn = schedules.service(name)
    kwargs = {"now": clock} if schedules.accepts(fn, "now") else {}
    result = duties.run_singleton(schedules.LOOPS[name].schedule_name, lambda: fn(**kwargs))
    if result.get("ran") is False or (result.get("ran") is None and "why" in result):
        return f"did not run: {result.get('why') or result}"
    extra = _detail(name, result)
    return (changes(result) or "nothing to change") + (f"; {extra}" if extra else "")


def _detail(name: str, result: dict) -> str:
    if name == "lifecycle":
        return (f"{result.get('seats_due', 0)} of {result.get('seats', 0)} seat(s) over their threshold, "
                f"{result.get('condensed', 0)} member text(s) condensed before summarising")
    if name == "embed_fill":
        return f"{result.get('requests', 0)} request(s), {result.get('bytes', 0)} bytes, {result.get('stopped', '')}"
    if name == "promotion":
        return f"{result.get('converged', 0)} converged cluster(s) over {result.get('units', 0)} unit(s)"
    if name == "clustering":
        return f"{result.get('drafted', 0)} draft(s) over {result.get('seats', 0)} seat(s)"
    return ""


def seed(seat: Seat, clock) -> str:
    """A month's history for ``seat`` when the reflection step left too few turns to make it due."""
    raw = Episode.objects.filter(seat=seat, kind=Episode.RAW).count()
    if raw > 500:
        return ""
    rng = random.Random(7)
    rows: list = []

    def add(age_days, tools, task, outcome="done", plan="", **fields):
        ended = clock - timedelta(days=age_days, minutes=rng.randint(0, 600))
        rows.append(Episode(seat=seat, task_summary=task, plan_summary=plan or f"Handled: {task}.",
                            tool_sequence=list(tools), review_outcome=outcome, started_at=ended - timedelta(minutes=9),
                            ended_at=ended, run_id=f"demo-{len(rows)}", **fields))

    skill = _skills(seat, clock)
    for i in range(60):
        add(rng.uniform(15, 40), ("read_file",), f"Retry round {i}", outcome="self_iterate")
    for i in range(40):
        add(rng.uniform(91, 120), (), f"Message from Bo: lunch plans {i}")
    for i in range(20):
        add(rng.uniform(40, 60), ROUTINES[0][0], f"Flaky test {i}", consolidated_into_skill=skill,
            consolidated_at=clock - timedelta(days=35))
    for tools, task, n in ROUTINES:
        for i in range(n):
            repo = rng.choice(REPOS)
            long_plan = (f"Reproduced the failure on {repo}, traced it to a stale fixture and a race in the "
                         "setup, pinned the dependency, reran the suite three times and opened a pull request "
                         "with the fix and a note for the reviewers about the flaky ordering. ") * 2
            add(rng.uniform(31, 95), tools, task.format(repo=repo, n=100 + i), plan=long_plan if i % 3 == 0 else "")
    for i in range(100):
        add(rng.uniform(0, 29), ROUTINES[i % 3][0], f"Recent work {i}")
    Episode.objects.bulk_create(rows)
    _notes(seat, clock)
    return f"{len(rows)} aged turns, 3 skills, 2 notes"


def _skills(seat: Seat, clock):
    specs = [("flaky-test-fix", "active", 5, False), ("deploy-checklist", "active", 40, False),
             ("old-migration", "stale", 100, False), ("pinned-runbook", "active", 200, True)]
    out = None
    for name, state, unused, pinned in specs:
        skill, _ = SynthesizedSkill.objects.get_or_create(
            seat=seat, name=name,
            defaults=dict(description=f"How {seat.handle} does {name}", body="1. Look.\n2. Fix.\n3. Verify.",
                          state=state, pinned=pinned, trigger="demo", created_at=clock - timedelta(days=300),
                          last_used_at=clock - timedelta(days=unused)),
        )
        out = out or skill
    return out


def _notes(seat: Seat, clock):
    DiaryEntry.objects.create(seat=seat, kind=DiaryEntry.SHORT, content="Sprint freeze runs through Friday",
                              ttl_until=clock - timedelta(days=2), created_at=clock - timedelta(days=9))
    DiaryEntry.objects.create(seat=seat, kind=DiaryEntry.LONG, content="The billing export runs nightly at 02:00; "
                              "its embed failed when it was written", created_at=clock - timedelta(days=3))
