"""PostgreSQL: a row's vector stays in the row (``STORAGE MAIN``), never moved out of line.

pgvector declares its type ``STORAGE EXTERNAL``. A row past PostgreSQL's TOAST threshold (about 2 kB)
has its largest out-of-line-able column moved to the table's TOAST relation, and with the packaged
all-MiniLM-L6-v2 a vector is 1,544 bytes (384 floats): beside an episode's or a note's text it is
usually that column. Every similarity scan then reads such a row's vector through the TOAST index,
one lookup a row: with 5,000 episodes of the prefetch bench's texts and 384-float vectors, 1 in 4 rows
had its vector out of line and a seat's top-30 by cosine took 3.5-3.7 ms against 1.5 ms with every
vector in its row. ``MAIN`` keeps it there (a row's texts, stored ``EXTENDED``, are compressed or
moved out first; they are read only for the few rows a search returns).

``keep_inline`` is the migration step: the columns' storage, then every stored vector that is out of
line rewritten into its row (found by ``pg_column_toast_chunk_id`` on PostgreSQL 17 and later; before
17, every stored vector is rewritten). SQLite stores a vector as a blob in its row already: nothing.
"""

from __future__ import annotations

from django.db import migrations

COLUMN = "embedding"


def _storage(tables: tuple[str, ...], storage: str, rewrite: bool):
    def run(apps, schema_editor):
        connection = schema_editor.connection
        if connection.vendor != "postgresql":
            return
        out_of_line = (f" AND pg_column_toast_chunk_id({COLUMN}) IS NOT NULL"
                       if connection.pg_version >= 170000 else "")
        for table in tables:
            schema_editor.execute(f"ALTER TABLE {table} ALTER COLUMN {COLUMN} SET STORAGE {storage}")
            if rewrite:  # a new value (not the stored pointer) is stored as the column's storage now says
                schema_editor.execute(f"UPDATE {table} SET {COLUMN} = subvector({COLUMN}, 1, vector_dims({COLUMN}))"
                                      f" WHERE {COLUMN} IS NOT NULL{out_of_line}")

    return run


def keep_inline(*tables: str) -> migrations.RunPython:
    """The migration step: ``tables``' vectors kept in their rows, the ones stored out of line moved in;
    backwards, pgvector's own storage again (the rows stay as they are)."""
    return migrations.RunPython(_storage(tables, "MAIN", True), _storage(tables, "EXTERNAL", False))
