"""A command that meets an unmigrated database says to run ``migrate`` instead of a traceback."""

from __future__ import annotations

from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections


def unapplied(alias: str = DEFAULT_DB_ALIAS) -> int | None:
    """How many migrations the database lacks (None when that cannot be read)."""
    from django.db.migrations.executor import MigrationExecutor

    try:
        executor = MigrationExecutor(connections[alias])
        return len(executor.migration_plan(executor.loader.graph.leaf_nodes()))
    except DatabaseError:
        return None


def advice(exc: BaseException, alias: str = DEFAULT_DB_ALIAS) -> str | None:
    """The one line to print for ``exc`` when the database is behind its migrations, else None."""
    if not isinstance(exc, DatabaseError):
        return None
    missing = unapplied(alias)
    if not missing:
        return None
    name = connections[alias].settings_dict.get("NAME")
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__  # the server's first line, not its caret
    return (f"the database {name} is not migrated ({missing} migration(s) not applied; {reason}). "
            "Run `manage.py migrate` first.")
