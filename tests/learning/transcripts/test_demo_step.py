"""`make demo`'s transcript step runs end to end and prints the ladder, the judge and the boundary."""

import io

from django.core.management.color import no_style

from demo import transcripts as step
from demo.state import DemoContext


class _Out:
    def __init__(self):
        self.buffer = io.StringIO()

    def write(self, text):
        self.buffer.write(text + "\n")


def test_the_transcript_demo_step_runs(seat):
    out = _Out()
    step.run(DemoContext(out=out, style=no_style()))
    text = out.buffer.getvalue()
    assert "ladder outcomes:" in text and "the human boundary" in text
    assert "approved: wrote 0 bytes" in text
