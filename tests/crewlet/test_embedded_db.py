"""The embedded PostgreSQL the settings use when DATABASE_URL is unset: several processes started at
once share one server on var/pgdata, each database has pgvector, and it outlives the processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import time
import django
django.setup()
from django.db import connection
with connection.cursor() as cursor:
    cursor.execute("SELECT pg_postmaster_start_time(), current_database(),"
                   " (SELECT extname FROM pg_extension WHERE extname = 'vector')")
    started, name, vector = cursor.fetchone()
time.sleep(1)  # the others are connected meanwhile
print(started.isoformat(), name, vector, connection.settings_dict["HOST"])
"""


def embedded(var: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"} | {"CREWLET_VAR_DIR": str(var)}
    return subprocess.run([sys.executable, "-m", "crewlet.embedded_db", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def test_processes_started_together_share_one_server_that_outlives_them(tmp_path):
    var = tmp_path / "var"
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(CREWLET_VAR_DIR=str(var), DJANGO_SETTINGS_MODULE="crewlet.settings")
    try:
        procs = [subprocess.Popen([sys.executable, "-c", PROBE], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(3)]
        outs = [p.communicate(timeout=180) for p in procs]
        assert all(p.returncode == 0 for p in procs), [err[-2000:] for _, err in outs]
        lines = {out.strip() for out, _ in outs}
        assert len(lines) == 1  # one server (one start time), one database, with pgvector
        started, name, vector, host = lines.pop().split()
        assert (name, vector, host) == ("crewlet", "vector", str(var / "pgdata"))

        assert embedded(var, "exists", "crewlet").returncode == 0  # still running after they exited
        assert embedded(var, "exists", "crewlet_demo").returncode == 1
        made = embedded(var, "recreate", "crewlet_demo")
        assert made.returncode == 0 and made.stdout.strip().endswith("/crewlet_demo")
        assert embedded(var, "exists", "crewlet_demo").returncode == 0
    finally:
        embedded(var, "stop")
    assert not (var / "pgdata" / "postmaster.pid").exists()
