"""Run the suite: ``python bin/test_engines.py [--engine postgres] [pytest args...]``.

The same as ``.venv/bin/pytest [args...]`` (tests/settings.py starts a throwaway embedded PostgreSQL
when ``DATABASE_URL`` is unset); ``--engine postgres`` is accepted and changes nothing, PostgreSQL
being the one engine.
"""

from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv: list[str]) -> int:
    if argv[:2] == ["--engine", "postgres"]:
        argv = argv[2:]
    elif argv[:1] == ["--engine"]:
        print(f"test_engines: PostgreSQL is the one engine, not {argv[1:2]}", file=sys.stderr)
        return 2
    return subprocess.call([sys.executable, "-m", "pytest", *argv], cwd=ROOT)


def start_pgserver():
    """A throwaway embedded PostgreSQL and its URL (``bench/fresh_db.py``'s, for the benches that import it here)."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from fresh_db import start_pgserver as start

    return start()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
