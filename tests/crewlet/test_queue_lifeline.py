"""``kill -9`` of one process of a real ``qcluster``: the rest of the cluster never runs on orphaned.

django-q2's sentinel never checks its parent, and its workers, pusher and monitor never check the
sentinel: killed with ``kill -9``, the main process leaves a sentinel that keeps taking tasks, and a
killed sentinel leaves children that keep pulling and running them with nobody to restart or stop
them. The project's ``qcluster`` command (``crewlet.queue_lifeline``) ties each to its parent.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests.learning.passes.test_qcluster import _env, records, start_cluster, stop, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

WORKERS = 2  # _env's CREWLET_Q_WORKERS
BOUND = 60.0  # seconds any wait below may take before the test fails (it returns as soon as it holds)


def children(pid: int) -> list[int]:
    """The live processes whose parent is ``pid`` (read from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue  # gone meanwhile
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[1]) == pid:
            found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def cluster_up(main: int) -> tuple[int, list[int]] | None:
    """(sentinel, its children) once the sentinel runs its workers, pusher and monitor."""
    sentinels = children(main)
    if len(sentinels) != 1:
        return None
    kids = children(sentinels[0])
    return (sentinels[0], kids) if len(kids) == WORKERS + 2 else None


def start(tmp_path: Path):
    proc = start_cluster(_env(CREWLET_Q_NAME="crewlet"), tmp_path / "cluster.log")
    assert wait_for(lambda: cluster_up(proc.pid) is not None, timeout=BOUND), (tmp_path / "cluster.log").read_text()
    sentinel, kids = cluster_up(proc.pid)  # type: ignore[misc]
    return proc, sentinel, kids


def reap(proc, pids: list[int]) -> None:
    """Whatever the test left running, gone (the cluster's process group, then any stray pid)."""
    stop(proc)
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_kill_9_of_the_main_process_stops_the_cluster_as_sigterm_would(tmp_path):
    from django_q.models import Task
    from django_q.tasks import async_task

    log = tmp_path / "held.jsonl"
    proc, sentinel, kids = start(tmp_path)
    try:
        async_task("tests.learning.passes.qcluster_probe.hold", str(log), 3.0, task_name="in-flight")
        assert wait_for(lambda: len(records(log)) >= 1, timeout=BOUND), "the task never started"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=BOUND)
        stopped = wait_for(lambda: not any(alive(p) for p in [sentinel, *kids]), timeout=BOUND)
        left = [p for p in [sentinel, *kids] if alive(p)]
    finally:
        reap(proc, [sentinel, *kids])
    text = (tmp_path / "cluster.log").read_text()
    assert stopped, f"orphaned after the main process died: {left}; log:\n{text[-2000:]}"
    # the way SIGTERM stops it: the task in flight ran to its end and its result was saved
    assert [r["phase"] for r in records(log)] == ["start", "end"]
    assert Task.objects.filter(name="in-flight", success=True).count() == 1, text[-2000:]
    assert "stopping cluster processes" in text


def test_a_task_queued_after_the_main_process_died_waits_for_the_next_cluster(tmp_path):
    from django_q.models import OrmQ, Task
    from django_q.tasks import async_task

    log = tmp_path / "marks.jsonl"
    proc, sentinel, kids = start(tmp_path)
    try:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=BOUND)
        stopped = wait_for(lambda: not any(alive(p) for p in [sentinel, *kids]), timeout=BOUND)
        async_task("tests.learning.passes.qcluster_probe.mark", str(log), task_name="after")
        queued = OrmQ.objects.count()
    finally:
        reap(proc, [sentinel, *kids])
    assert stopped, "an orphaned sentinel is still running"
    assert records(log) == [] and queued == 1  # no orphan took it
    again = start_cluster(_env(CREWLET_Q_NAME="crewlet"), tmp_path / "again.log")
    try:
        ran = wait_for(lambda: Task.objects.filter(name="after", success=True).exists(), timeout=BOUND)
    finally:
        stop(again)
    assert ran and len(records(log)) == 1


def test_kill_9_of_the_sentinel_ends_its_workers_pusher_and_monitor(tmp_path):
    proc, sentinel, kids = start(tmp_path)
    try:
        os.kill(sentinel, signal.SIGKILL)
        stopped = wait_for(lambda: not any(alive(p) for p in kids), timeout=BOUND)
        left = [p for p in kids if alive(p)]
        main_gone = wait_for(lambda: proc.poll() is not None, timeout=BOUND)
    finally:
        reap(proc, [sentinel, *kids])
    assert stopped, f"the sentinel's children outlived it: {left}"
    assert main_gone
