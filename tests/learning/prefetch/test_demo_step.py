"""The demo step runs end to end on a seat with little memory and prints what the agent would see."""

import io

from django.core.management.color import no_style

from core.models import Event
from demo import prefetch as step
from demo.state import DemoContext
from learning.prefetch.hints import EmptyMemoryHint, EmptyRecallHint
from tests.learning.memory.rows import episode, note


class _Out:
    def __init__(self):
        self.buffer = io.StringIO()

    def write(self, text):
        self.buffer.write(text + "\n")


def test_demo_shows_a_rich_and_a_thin_prefetch_and_a_query_episodes_call(seat, role):
    role.tools = ["query_episodes", "refresh_memory"]
    role.save()
    note(seat, "Ravi approves payments releases while Maya is away")
    episode(seat, label="PLAT-88: Payments webhook retries double-charge", ask="Reproduce against staging first.",
            did="Reproduced the double charge on staging.", run_id="t-88", conversation_id="jira:PLAT-88")
    out = _Out()
    step.run(DemoContext(out=out, style=no_style()))
    text = out.buffer.getvalue()
    assert "a rich trigger" in text and "a thin trigger" in text and "query_episodes(query=" in text
    assert "Reproduced the double charge on staging." in text and "turn ids: ['t-88']" in text
    assert EmptyRecallHint in text and EmptyMemoryHint in text and "Ana (you):" in text
    assert "frozen=True, identical prefix=True" in text
    assert Event.objects.filter(name="prefetch_summary").count() == 2


def test_demo_is_robust_with_no_memory_at_all(seat):
    out = _Out()
    step.run(DemoContext(out=out, style=no_style()))
    assert "None of your past turns resembles this" in out.buffer.getvalue()
