import threading
import time

import pytest

from core.models import Event
from core.providers.errors import TransientError
from core.providers.llm.scripted import ScriptedProvider
from learning import limits, rewrites


@pytest.fixture(autouse=True)
def idle_pool():
    """Each test starts with no rewrite of an earlier test still running (a late one would take its answers)."""
    workers = limits.MAX_CONCURRENT_REWRITES
    barrier = threading.Barrier(workers)
    for future in [rewrites._pool.submit(barrier.wait) for _ in range(workers)]:
        future.result()  # all workers were free at once: every earlier rewrite has finished
    ScriptedProvider.reset()  # and forget what those late rewrites asked
    yield


def test_short_texts_are_whole_and_long_ones_condensed_and_labelled(seat):
    out = rewrites.rewrite_all(seat=seat, texts=["short", "word " * 300], max_bytes=600, stage="turn")
    assert out[0].mode == "whole" and out[0].render() == "short"
    assert out[1].mode == "rewrite" and rewrites.nbytes(out[1].text) <= 600 and out[1].render().endswith("(condensed)")
    assert Event.objects.filter(name="auxiliary_spend", payload__purpose="condense").count() == 1


def test_a_text_no_rewrite_reached_is_named_by_its_size(seat, role):
    role.llm_auxiliary = ["scripted"]
    role.save()
    ScriptedProvider.queue("condense", TransientError("down"))
    long = "x " * 400
    out = rewrites.rewrite_all(seat=seat, texts=[long], max_bytes=600, stage="turn")
    assert out[0].mode == "size" and "800 bytes" in out[0].render()


def test_all_rewrites_share_one_deadline(seat, role, monkeypatch):
    role.llm_auxiliary = ["scripted"]
    role.save()
    original = ScriptedProvider.complete

    def slow(self, *a, **k):
        time.sleep(0.5)
        return original(self, *a, **k)

    monkeypatch.setattr(ScriptedProvider, "complete", slow)
    out = rewrites.rewrite_all(seat=seat, texts=["y " * 400] * 8, max_bytes=100, stage="turn", timeout=0.8)
    # four at a time, 0.5 s each: the second wave cannot finish inside one shared 0.8 s deadline
    # (a deadline per wave would have let all eight through)
    assert sum(r.mode == "size" for r in out) >= 4
    assert sum(r.mode == "rewrite" for r in out) <= 4


def _rows():
    return [(e.payload["outcome"], e.payload["output_tokens"] > 0)
            for e in Event.objects.filter(name="auxiliary_spend", payload__purpose="condense").order_by("id")]


def test_a_rewrite_over_its_bound_is_asked_again_once_told_its_size(seat, role):
    role.llm_auxiliary = ["scripted"]
    role.save()
    ScriptedProvider.queue("condense", "word " * 40, "the short version")  # 200 bytes, then 17

    (out,) = rewrites.rewrite_all(seat=seat, texts=["z " * 400], max_bytes=100, stage="turn")

    assert (out.mode, out.text) == ("rewrite", "the short version")
    retry = [c for c in ScriptedProvider.calls if c["purpose"] == "condense"][1]
    assert "Your previous condensation was 199 bytes, over the bound" in retry["messages"][0]["content"]
    assert _rows() == [("answered", True), ("answered", True)]  # both calls charged


def test_a_rewrite_still_over_its_bound_is_named_by_its_size_and_both_calls_charged(seat, role):
    role.llm_auxiliary = ["scripted"]
    role.save()
    ScriptedProvider.queue("condense", "word " * 40, "word " * 30)

    (out,) = rewrites.rewrite_all(seat=seat, texts=["z " * 400], max_bytes=100, stage="turn")

    assert out.mode == "size" and "800 bytes" in out.render()
    assert _rows() == [("answered", True), ("answered", True)]
