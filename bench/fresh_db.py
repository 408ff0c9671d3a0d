"""A throwaway database for a bench: an embedded PostgreSQL in a temporary folder, removed afterwards."""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def start_pgserver():
    """A new embedded PostgreSQL (with pgvector) and its database URL; ``server.cleanup()`` removes it
    (so does this process's exit)."""
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    from crewlet import embedded_db

    return embedded_db.throwaway()


def run_fresh(argv: list[str], **extra_env: str) -> int:
    """Run ``python argv...`` (a bench's child) against a fresh database; its exit code."""
    server, url = start_pgserver()
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="crewlet.settings", DATABASE_URL=url, **extra_env)
    try:
        return subprocess.call([sys.executable, *argv], cwd=ROOT, env=env)
    finally:
        server.cleanup()
