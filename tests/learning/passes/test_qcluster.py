"""Real ``qcluster`` processes on the test database: the duty singleton under two
clusters, and a task through the Redis broker."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import quote

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.django_db(transaction=True)


def test_database_url() -> str:
    """The URL of the database this test runs on (pytest-django's ``test_<name>``)."""
    s = connection.settings_dict
    auth = quote(s["USER"] or "", safe="") + (f":{quote(s['PASSWORD'], safe='')}" if s.get("PASSWORD") else "")
    host = quote(s["HOST"] or "localhost", safe="")
    port = f":{s['PORT']}" if s.get("PORT") else ""
    return f"postgres://{auth}@{host}{port}/{s['NAME']}"


test_database_url.__test__ = False


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(DATABASE_URL=test_database_url(), CREWLET_Q_WORKERS="2", CREWLET_LOG_LEVEL="WARNING",
               DJANGO_SETTINGS_MODULE="tests.learning.passes.qsettings", PYTHONPATH=str(ROOT))
    env.update(extra)
    return env


def start_cluster(env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "manage.py", "qcluster"], cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)  # the cluster's own graceful stop; its workers follow
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def records(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def wait_for(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.3)
    return predicate()


def test_two_qcluster_processes_never_run_one_duty_at_once(tmp_path):
    from django_q.tasks import async_task

    log = tmp_path / "runs.jsonl"
    tasks = 12
    for _ in range(tasks):
        async_task("tests.learning.passes.qcluster_probe.probe", str(log), 0.8)
    env = _env(CREWLET_Q_NAME="crewlet")  # the ORM broker's queue is the test database's own
    clusters = [start_cluster(env, tmp_path / f"cluster{i}.log") for i in range(2)]
    try:
        finished = wait_for(lambda: len(records(log)) >= tasks, timeout=120)
    finally:
        for proc in clusters:
            stop(proc)
    logs = "\n".join((tmp_path / f"cluster{i}.log").read_text()[-2000:] for i in range(2))
    assert finished, f"only {len(records(log))} of {tasks} probes reported; cluster logs:\n{logs}"
    runs = sorted((r for r in records(log) if r["ran"]), key=lambda r: r["start"])
    skipped = [r for r in records(log) if not r["ran"]]
    assert runs, "no probe ever held the duty"
    for before, after in zip(runs, runs[1:], strict=False):
        assert after["start"] >= before["end"], f"two holders at once: {before} and {after}"
    assert skipped, "the probes never contended, so the test proved nothing"
    assert len({r["pid"] for r in records(log)}) >= 2  # more than one worker process competed


def test_a_task_enqueued_through_the_redis_broker_is_processed_by_a_qcluster(tmp_path, require_redis):
    log = tmp_path / "marks.jsonl"
    env = _env(CREWLET_Q_REDIS="redis://127.0.0.1:6379/0", CREWLET_Q_NAME=f"crewlet-test-{uuid.uuid4().hex[:8]}")
    enqueue = (
        "from django_q.tasks import async_task; from django_q.brokers import get_broker; "
        f"b = get_broker(); print(type(b).__name__); async_task('tests.learning.passes.qcluster_probe.mark', {str(log)!r})"
    )
    done = subprocess.run([sys.executable, "manage.py", "shell", "-c", enqueue], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "Redis"
    from django_q.models import Task

    saved = Task.objects.filter(func="tests.learning.passes.qcluster_probe.mark", success=True)
    cluster = start_cluster(env, tmp_path / "cluster.log")
    try:
        processed = wait_for(lambda: bool(records(log)) and saved.exists(), timeout=60)
    finally:
        stop(cluster)
    assert processed, (tmp_path / "cluster.log").read_text()[-2000:]
    assert records(log)[0]["broker"].startswith("redis://") and saved.count() == 1
