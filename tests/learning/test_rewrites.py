import time

from core.models import Event
from core.providers.errors import TransientError
from core.providers.llm.scripted import ScriptedProvider
from learning import rewrites


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
