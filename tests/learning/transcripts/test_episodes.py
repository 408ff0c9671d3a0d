"""Episodes: every failure -> recovery arc, the request it served, corrections about the interrupted
work only, a bound per session; counts exact across append, rewrite and re-ingest."""

from __future__ import annotations

import random

from bench.claude_sessions import write_session
from learning.transcripts.adapters.claude_code import MAX_EPISODES_PER_SESSION, ClaudeCodeAdapter
from learning.transcripts.ingest import ingest
from learning.transcripts.models import TranscriptEpisode, TranscriptSession
from tests.learning.transcripts.conftest import Session


def _read(path, watermark=""):
    return ClaudeCodeAdapter().read(str(path), watermark)


def _long_turn(s: Session, calls: int, failures: list[tuple[str, str, str]]):
    """One human turn of ``calls`` working calls with each ``(failed, error, fix)`` arc spread through it."""
    s.user("Add pagination to the orders list endpoint.")
    per = calls // (len(failures) + 1)
    n = 0
    for failed, error, fix in failures:
        for _ in range(per):
            n += 1
            s.call(f"r{n}", name="Read", file_path=f"/srv/app/orders/f{n}.py").result(f"r{n}", "def f(): pass\n" * 20)
        n += 1
        s.call(f"f{n}", command=failed).result(f"f{n}", error, error=True)
        n += 1
        s.call(f"w{n}", command=fix).result(f"w{n}", "ok")
    return s


def test_every_failure_recovery_arc_in_a_long_turn_is_an_episode_with_its_request(tmp_path):
    s = _long_turn(Session(), 300, [
        ("git push", "Exit code 128\nfatal: The current branch feat-x has no upstream branch.", "git push -u origin feat-x"),
        ("pytest -q", "Exit code 2\nModuleNotFoundError: No module named 'django'", "uv run pytest -q"),
        ("git add a.py var/x.db", "Exit code 1\nThe following paths are ignored by one of your .gitignore files:\nvar/x.db", "git add a.py"),
    ])
    episodes = _read(s.write(tmp_path / "s.jsonl")).episodes
    assert [e.kind for e in episodes] == ["self_corrected"] * 3
    assert [e.attempt for e in episodes] == ["Bash: git push", "Bash: pytest -q", "Bash: git add a.py var/x.db"]
    assert {e.ask for e in episodes} == {"Add pagination to the orders list endpoint."}
    assert "no upstream branch" in episodes[0].failure and episodes[0].correction == "Bash: git push -u origin feat-x"


def test_a_failure_nobody_recovered_from_is_no_episode(tmp_path):
    s = Session().user("Deploy.").call("t1", command="./deploy.sh").result("t1", "permission denied", error=True)
    s.call("t2", name="Read", file_path="/srv/README").result("t2", "docs")
    assert _read(s.write(tmp_path / "s.jsonl")).episodes == []


def test_a_runaway_retry_loop_is_bounded_per_session(tmp_path):
    s = Session().user("Make the build pass.")
    for i in range(MAX_EPISODES_PER_SESSION + 40):
        s.call(f"f{i}", command="make build").result(f"f{i}", "error: linker failed", error=True)
        s.call(f"w{i}", command="make build").result(f"w{i}", "ok")
    path = s.write(tmp_path / "s.jsonl")
    first = _read(path)
    assert len(first.episodes) == MAX_EPISODES_PER_SESSION
    s.call("f-late", command="make build").result("f-late", "error", error=True).call("w-late", command="make build").result("w-late", "ok")
    path.write_text(s.text())
    assert _read(path, first.watermark).episodes == []  # the bound holds across reads


def test_an_interrupt_is_a_correction_only_when_what_follows_is_about_the_interrupted_work(tmp_path):
    s = Session().user("Run the orders test suite.").call("t1", command="pytest orders").result("t1", "running")
    s.user("[Request interrupted by user for tool use]")
    s.user("Run only the orders tests that changed, not the whole suite.")
    s.call("t2", command="pytest orders/tests/test_list.py").result("t2", "ok")
    s.user("[Request interrupted by user]")
    s.user("What is the weather like in Lisbon?")
    episodes = _read(s.write(tmp_path / "s.jsonl")).episodes
    assert [(e.kind, e.ask) for e in episodes] == [("corrected", "Run the orders test suite.")]
    assert episodes[0].correction.startswith("Run only the orders tests")


def test_generated_sessions_give_one_episode_per_arc_and_skip_the_unrelated_interrupt(tmp_path):
    rng = random.Random(5)
    (path, *_rest) = write_session(tmp_path, rng, index=0, calls_per_turn=40)  # index 0: the interrupt starts a new request
    episodes = _read(path).episodes
    assert all(e.kind == "self_corrected" for e in episodes) and len(episodes) >= 6
    (path2, *_rest) = write_session(tmp_path, rng, index=1, calls_per_turn=40)
    kinds = [e.kind for e in _read(path2).episodes]
    assert kinds.count("corrected") == 1


def _counts(seat):
    rows = TranscriptSession.objects.filter(seat=seat)
    return rows.count(), sum(r.human_messages for r in rows), sum(sum(r.pseudo_user.values()) for r in rows)


def test_counts_are_exact_across_append_rewrite_and_re_ingest(seat, tmp_path):
    s = Session("s1").user("Run the tests.").call("t1", command="pytest").result("t1", "boom", error=True)
    path = s.write(tmp_path / "s1.jsonl")
    ingest(paths=[str(path)], seat=seat)
    assert _counts(seat) == (1, 1, 1)
    s.user("No, tests run with `make test`, never bare pytest.").call("t2", command="make test").result("t2", "ok")
    path.write_text(s.text())  # appended
    ingest(paths=[str(path)], seat=seat)
    assert _counts(seat) == (1, 2, 2)
    ingest(paths=[str(path)], seat=seat)  # re-ingested unchanged
    assert _counts(seat) == (1, 2, 2)
    s.lines[0] = s.lines[0].replace("Run the tests.", "Run the test suite.")
    path.write_text(s.text())  # rewritten, not appended: read from the top, counts replaced
    summary = ingest(paths=[str(path)], seat=seat)
    assert any("changed since the last read" in w for w in summary.warnings)
    assert _counts(seat) == (1, 2, 2)
    assert TranscriptEpisode.objects.filter(kind="corrected").count() == 1


def test_records_without_a_session_id_make_no_phantom_session(seat, tmp_path):
    s = Session("real-id")
    s.raw('{"type": "summary", "summary": "Earlier work", "leafUuid": "x"}')
    s.raw('{"type": "file-history-snapshot", "messageId": "m", "snapshot": {}}')
    s.user("Run the tests.").call("t1", command="pytest").result("t1", "ok")
    s.raw('{"type": "queue-operation", "operation": "remove", "timestamp": "2025-05-01T11:00:00Z"}')
    summary = ingest(paths=[str(s.write(tmp_path / "named-after-the-file.jsonl"))], seat=seat)
    assert summary.sessions == {"real-id"}
    assert list(TranscriptSession.objects.values_list("session_id", flat=True)) == ["real-id"]


def test_a_final_line_without_a_newline_is_read(tmp_path):
    s = Session().user("Run the tests.").call("t1", command="pytest").result("t1", "boom", error=True)
    s.user("No, tests run with `make test`, never bare pytest.")
    path = tmp_path / "s.jsonl"
    path.write_text(s.text().rstrip("\n"))
    first = _read(path)
    assert first.sessions[0].human_messages == 2 and [e.kind for e in first.episodes] == ["corrected"]
    s.call("t2", command="make test").result("t2", "ok")
    path.write_text(s.text())  # the writer goes on after that line
    again = _read(path, first.watermark)
    assert again.warnings == [] and again.episodes == [] and again.sessions[0].human_messages == 0
