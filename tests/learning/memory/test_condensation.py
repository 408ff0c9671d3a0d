import threading

import pytest

from core import late_spend
from core.models import Event
from core.providers.errors import TransientError
from core.providers.llm.scripted import ScriptedProvider
from learning.memory import condensation


def test_short_texts_are_whole_and_long_ones_condensed_and_labelled(seat):
    out = condensation.rewrite_all(seat=seat, texts=["short", "word " * 300], max_bytes=600, stage="turn")
    assert out[0].mode == "whole" and out[0].render() == "short"
    assert out[1].mode == "rewrite" and condensation.nbytes(out[1].text) <= 600 and out[1].render().endswith("(condensed)")
    assert Event.objects.filter(name="auxiliary_spend", payload__purpose="condense").count() == 1


def test_a_text_no_rewrite_reached_is_named_by_its_size(seat, role):
    role.llm_auxiliary = ["scripted"]
    role.save()
    ScriptedProvider.queue("condense", TransientError("down"))
    long = "x " * 400
    out = condensation.rewrite_all(seat=seat, texts=[long], max_bytes=600, stage="turn")
    assert out[0].mode == "size" and "800 bytes" in out[0].render()


def gated(monkeypatch, answered_at_once: int):
    """The scripted provider answers its first ``answered_at_once`` calls at once; later calls wait
    until the test sets the returned event (they are still running at any deadline before that)."""
    original, release, lock = ScriptedProvider.complete, threading.Event(), threading.Lock()
    seen = []

    def complete(self, *a, **k):
        with lock:
            seen.append(1)
            n = len(seen)
        if n > answered_at_once:
            release.wait(30)
        return original(self, *a, **k)

    monkeypatch.setattr(ScriptedProvider, "complete", complete)
    return release


def _made():
    return sum(c["purpose"] == "condense" for c in ScriptedProvider.calls)


@pytest.mark.django_db(transaction=True)  # late calls are recorded on their own threads' connections
def test_all_rewrites_share_one_deadline_and_the_late_ones_are_charged(seat, role, monkeypatch):
    role.llm_auxiliary = ["scripted"]
    role.save()
    release = gated(monkeypatch, answered_at_once=4)

    out = condensation.rewrite_all(seat=seat, texts=["y " * 400] * 12, max_bytes=100, stage="turn", timeout=0.8)

    # four at a time: the first four answer, the second four are still running at the one shared
    # deadline, and the last four never started (a deadline per wave would have let all through)
    assert [r.mode for r in out] == ["rewrite"] * 4 + ["size"] * 8
    release.set()
    assert late_spend.wait(30) == 0
    assert _made() == 8  # the four that never started were cancelled, never sent
    assert _rows() == [("answered", True)] * 8  # and every one sent is charged, late ones included


@pytest.mark.django_db(transaction=True)
def test_a_rewrite_still_running_at_the_deadline_does_not_send_its_retry(seat, role, monkeypatch):
    role.llm_auxiliary = ["scripted"]
    role.save()
    ScriptedProvider.queue("condense", "word " * 40, "the short word version")  # over the bound, then within
    release = gated(monkeypatch, answered_at_once=0)

    (out,) = condensation.rewrite_all(seat=seat, texts=["word " * 160], max_bytes=100, stage="turn", timeout=0.3)

    assert out.mode == "size"
    release.set()
    assert late_spend.wait(30) == 0
    assert _made() == 1 and _rows() == [("answered", True)]  # the late answer charged, no retry sent


def _rows():
    return [(e.payload["outcome"], e.payload["output_tokens"] > 0)
            for e in Event.objects.filter(name="auxiliary_spend", payload__purpose="condense").order_by("id")]


def test_a_rewrite_over_its_bound_is_asked_again_once_told_its_size(seat, role):
    role.llm_auxiliary = ["scripted"]
    role.save()
    ScriptedProvider.queue("condense", "word " * 40, "the short word version")  # 200 bytes, then 22

    (out,) = condensation.rewrite_all(seat=seat, texts=["word " * 160], max_bytes=100, stage="turn")

    assert (out.mode, out.text) == ("rewrite", "the short word version")
    retry = [c for c in ScriptedProvider.calls if c["purpose"] == "condense"][1]
    assert "Your previous condensation was 199 bytes, over the bound" in retry["messages"][0]["content"]
    assert _rows() == [("answered", True), ("answered", True)]  # both calls charged


def test_a_rewrite_still_over_its_bound_is_named_by_its_size_and_both_calls_charged(seat, role):
    role.llm_auxiliary = ["scripted"]
    role.save()
    ScriptedProvider.queue("condense", "word " * 40, "word " * 30)

    (out,) = condensation.rewrite_all(seat=seat, texts=["word " * 160], max_bytes=100, stage="turn")

    assert out.mode == "size" and "800 bytes" in out.render()
    assert _rows() == [("answered", True), ("answered", True)]
