# SQLite: episodes_fts and diary_fts hold each seat's words as the seat's own tokens (core.hybrid.seat_tokens:
# "billing" of seat 4 is "s4xbilling"), so a MATCH and bm25's count of a word's rows read only the seat's
# postings, not every seat's (the "seat" column they replace only filtered the rows after). The triggers call
# the application function crewlet_seat_tokens (registered on every connection Django opens, as sqlite-vec is
# loaded); both indexes are rebuilt for the rows already stored and merged into one segment.
# PostgreSQL: nothing (its text half already reads only the scope's rows).

import importlib

from django.db import migrations

EPISODE_TEXT = importlib.import_module("learning.migrations.0010_episode_fts_per_seat")
DIARY_TEXT = importlib.import_module("learning.migrations.0011_diary_search")

TOKENIZE = "content='', contentless_delete=1, tokenize='porter unicode61'"


def seat_index(fts: str, table: str, columns: str, text: str) -> list[str]:
    """The index of ``table`` whose body is crewlet_seat_tokens(seat, ``text``), its triggers, its rows."""
    new, bare = text.format(p="new."), text.format(p="")
    insert = f"INSERT INTO {fts}(rowid, body) VALUES (new.id, crewlet_seat_tokens(new.seat_id, {new}))"
    return [
        f"CREATE VIRTUAL TABLE {fts} USING fts5(body, {TOKENIZE})",
        f"CREATE TRIGGER {fts}_ai AFTER INSERT ON {table} BEGIN {insert}; END",
        f"CREATE TRIGGER {fts}_ad AFTER DELETE ON {table} BEGIN DELETE FROM {fts} WHERE rowid = old.id; END",
        f"CREATE TRIGGER {fts}_au AFTER UPDATE OF seat_id, {columns} ON {table} BEGIN "
        f"DELETE FROM {fts} WHERE rowid = old.id; {insert}; END",
        f"INSERT INTO {fts}(rowid, body) SELECT id, crewlet_seat_tokens(seat_id, {bare}) FROM {table}",
        f"INSERT INTO {fts}({fts}) VALUES ('optimize')",
    ]


def drop(fts: str) -> list[str]:
    return [f"DROP TRIGGER IF EXISTS {fts}_{t}" for t in ("au", "ad", "ai")] + [f"DROP TABLE IF EXISTS {fts}"]


SQLITE_FORWARD = (
    drop("episodes_fts") + seat_index("episodes_fts", "episodes", "task_summary, ask, plan_summary", EPISODE_TEXT.TEXT)
    + drop("diary_fts") + seat_index("diary_fts", "agent_diary", "content", "{p}content")
)
SQLITE_BACKWARD = (
    drop("episodes_fts") + EPISODE_TEXT.sqlite_index("seat, body", seat=True)
    + drop("diary_fts") + DIARY_TEXT.SQLITE_FORWARD
)


def _run(statements):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "sqlite":
            for sql in statements:
                schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):

    dependencies = [
        ("learning", "0013_episode_pieces_own_lines"),
    ]

    operations = [
        migrations.RunPython(_run(SQLITE_FORWARD), _run(SQLITE_BACKWARD)),
    ]
