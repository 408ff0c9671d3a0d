"""Demo step: a month of history seeded in the past, then every background pass once, at real time.

The earlier steps' turns are today's, so they stay as a lead will find them (their prefetch
snapshots kept, the showcase turns unfolded); the seeded history is what the passes act on: for
ana, mid-state rounds, chat-only turns, turns a skill absorbed, three kinds of routine tool work
and skills the curator should age, each dated between a day and four months ago. Nothing is dated
after now, so the database reads the same the day after the demo.
"""

from __future__ import annotations

import random
from datetime import timedelta

from django.core.management import call_command
from django.utils import timezone

from crewlet.models import Seat
from learning.management.commands.run_pass import changes
from learning.models import DiaryEntry, Episode, SynthesizedSkill
from learning.passes import duties, schedules

SEED_FOR = "ana"
REPOS = ["billing-api", "web-shell", "ingest-worker", "auth-gateway"]
STAGES = ["unit tests", "lint", "integration tests", "image build"]
# (tools, task label, what it did, how many); {repo}, {n} and {stage} are filled per turn
ROUTINES = [
    (("git_clone", "run_tests", "read_file", "edit_file", "open_pr"), "CI failure on {repo}",
     "Reproduced the {stage} failure on {repo}, fixed the test setup and opened a PR.", 130),
    (("kubectl_get", "kubectl_logs", "grafana_query", "post_message"), "Alert fired for {repo}",
     "Read the {repo} pod logs, matched the spike to a deploy and posted the cause in the channel.", 100),
    (("jira_search", "jira_comment", "post_message"), "Triage ticket ENGT-{n}",
     "Found the duplicate of ENGT-{n}, linked it and told the reporter where the fix is tracked.", 60),
]
# a long account of one turn, different sentence by sentence: the lifecycle condenses texts this long
LONG_PLAN = ("Reproduced the failure on {repo} with the exact CI image. The {stage} step failed only when the "
             "cache was warm, so the fixture loaded stale rows from a previous job. Pinned the fixture loader to "
             "a fresh schema per run, reran the suite three times to rule out ordering, and opened a pull request "
             "with the fix. The PR description lists the two tests that were flaky and how the reviewers can "
             "reproduce the old failure locally with the cache flag.")
ORDER = ("lifecycle", "curator", "clustering", "embed_fill", "retention", "promotion")


def run(ctx) -> None:
    ctx.heading("Background passes: a month of history seeded in the past, every pass once")
    call_command("install_schedules", stdout=ctx.out)
    now = ctx.clock or timezone.now()
    ana = Seat.objects.select_related("role", "company").filter(handle=SEED_FOR).first()
    if ana is not None:
        seeded = seed(ana, now)
        if seeded:
            ctx.line(f"seeded {SEED_FOR}: {seeded}")
    for name in ORDER:
        ctx.line(f"-- {name}: {describe(name, now)}")


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


def seed(seat: Seat, now) -> str:
    """A month's history for ``seat``, dated in the past, when it has too few turns to make its lifecycle due."""
    raw = Episode.objects.filter(seat=seat, kind=Episode.RAW).count()
    if raw > 500:
        return ""
    rng = random.Random(7)
    rows: list = []

    def add(age_days, tools, task, outcome="done", plan="", **fields):
        ended = now - timedelta(days=age_days, minutes=rng.randint(0, 600))
        rows.append(Episode(seat=seat, task_summary=task, plan_summary=plan, tool_sequence=list(tools),
                            review_outcome=outcome, started_at=ended - timedelta(minutes=9), ended_at=ended,
                            run_id=f"demo-history-{len(rows) + 1}", **fields))

    def filled(texts: tuple[str, str], n: int) -> tuple[str, str]:
        """A turn's label and account, naming the same repository, stage and ticket."""
        words = {"repo": rng.choice(REPOS), "stage": rng.choice(STAGES), "n": n}
        return texts[0].format(**words), texts[1].format(**words)

    skill = _skills(seat, now)
    for _ in range(60):
        repo, stage = rng.choice(REPOS), rng.choice(STAGES)
        add(rng.uniform(15, 40), ("read_file",), f"Retry the {repo} {stage} after review", outcome="self_iterate",
            plan=f"Read the review comments on the {repo} {stage}; another round was asked for.")
    for _ in range(40):
        add(rng.uniform(91, 120), (), rng.choice(["Message from Bo: lunch on Friday?", "Message from Bo: team offsite dates",
                                                   "Message from Cy: coffee at ten?"]),
            plan="Answered in the thread; nothing to do.")
    for _ in range(20):
        repo = rng.choice(REPOS)
        add(rng.uniform(40, 60), ROUTINES[0][0], f"Flaky test in {repo}", consolidated_into_skill=skill,
            consolidated_at=now - timedelta(days=35), plan=f"Quarantined the flaky test in {repo} and filed a fix.")
    for tools, task, did, n in ROUTINES:
        for i in range(n):
            label, plan = filled((task, LONG_PLAN if i % 3 == 0 else did), 100 + i)
            add(rng.uniform(31, 95), tools, label, plan=plan)
    for i in range(100):
        tools, task, did, _n = ROUTINES[i % 3]
        label, plan = filled((task, did), 300 + i)
        add(rng.uniform(1, 29), tools, label, plan=plan)
    Episode.objects.bulk_create(rows)
    _notes(seat, now)
    return f"{len(rows)} turns over the last four months, 4 skills, 2 notes"


def _skills(seat: Seat, now):
    """Skills the curator ages: (name, state, days since last used, uses, pinned)."""
    specs = [("flaky-test-fix", "active", 5, 14, False), ("deploy-checklist", "active", 40, 6, False),
             ("old-migration", "stale", 100, 2, False), ("pinned-runbook", "active", 200, 9, True)]
    out = None
    for name, state, unused, uses, pinned in specs:
        skill, _ = SynthesizedSkill.objects.get_or_create(
            seat=seat, name=name,
            defaults=dict(description=f"How {seat.handle} handles {name.replace('-', ' ')}",
                          body="1. Look.\n2. Fix.\n3. Verify.", state=state, pinned=pinned, trigger="demo",
                          use_count=uses, created_at=now - timedelta(days=300),
                          last_used_at=now - timedelta(days=unused)),
        )
        out = out or skill
    return out


def _notes(seat: Seat, now):
    DiaryEntry.objects.create(seat=seat, kind=DiaryEntry.SHORT, content="Sprint freeze runs through Friday",
                              ttl_until=now - timedelta(days=2), created_at=now - timedelta(days=9))
    DiaryEntry.objects.create(seat=seat, kind=DiaryEntry.LONG, content="The billing export runs nightly at 02:00; "
                              "its embed failed when it was written", created_at=now - timedelta(days=3))
