"""The demo's passes step leaves a database a lead can explore: nothing dated after now, no filler
labels, today's turns with what they were shown, and the showcase query still answered."""

import io
import re
from collections import Counter

import pytest
from django.core.management.color import no_style
from django.utils import timezone

from demo import passes
from demo.state import DemoContext
from learning.models import DiaryEntry, Episode, PrefetchSnapshot, SynthesizedSkill
from learning.prefetch import PrefetchRequest, prefetch
from learning.tools import run as run_tool
from tests.learning.memory.rows import episode

pytestmark = pytest.mark.django_db(transaction=True)


class _Out:
    def __init__(self):
        self.buffer = io.StringIO()

    def write(self, text):
        self.buffer.write(str(text) + "\n")


def test_the_passes_step_keeps_todays_turns_and_dates_nothing_after_now(seat):
    episode(seat, label="PLAT-88: Payments webhook retries double-charge", ask="Reproduce the webhook retries on staging.",
            did="Checked out the branch and started a staging reproduction.", outcome="self_iterate", days_ago=0,
            run_id="demo-ana-04", tools=["jira_get_issue", "git_checkout"])
    prefetch(seat=seat, request=PrefetchRequest(run_id="demo-ana-04", ask="PLAT-88: webhook retries double-charge"))

    out = _Out()
    passes.run(DemoContext(out=out, style=no_style()))
    text = out.buffer.getvalue()
    now = timezone.now()

    assert "lifecycle:" in text and "retention:" in text and "did not run" not in text
    for model, field in ((Episode, "ended_at"), (Episode, "started_at"), (DiaryEntry, "created_at"),
                         (SynthesizedSkill, "last_used_at"), (SynthesizedSkill, "created_at")):
        assert not model.objects.filter(**{f"{field}__gt": now}).exists(), (model.__name__, field)
    # today's turn keeps what it was shown, and the showcase query still finds it
    assert PrefetchSnapshot.objects.filter(seat=seat, run_id="demo-ana-04").exists()
    found = run_tool(seat=seat, name="query_episodes", run_id="run-q", arguments={"query": "webhook retries double charge"})
    assert found.ok and "demo-ana-04" in found.text
    # labels a person would write: none numbered filler, no account said twice over
    labels = list(Episode.objects.filter(seat=seat).values_list("task_summary", "plan_summary"))
    assert not any(re.search(r"(Recent work|Retry round|lunch plans|Flaky test) \d+$", label) for label, _ in labels)
    assert not any(plan.startswith("Handled:") for _, plan in labels)
    for _, plan in labels:
        sentences = [s for s in re.split(r"(?<=\.) ", plan) if s]
        assert max(Counter(sentences).values(), default=0) == 1, plan
    # a skill with no recorded use reads as never used, not "just now"
    assert not SynthesizedSkill.objects.filter(use_count=0, last_used_at__isnull=False, trigger="demo").exists()
