# Full-text index of diary notes for the hybrid similarity half (core.hybrid):
# - SQLite: diary_fts (FTS5, contentless) of the seat ("s<seat id>") and the note, kept by triggers;
# - PostgreSQL: search_tsv (generated tsvector, GIN index) and search_len (its length, BM25's
#   document length).
# Both are built for the notes already stored when the migration runs.

from django.db import migrations

SQLITE_FORWARD = [
    "CREATE VIRTUAL TABLE diary_fts USING fts5(seat, body, content='', contentless_delete=1, "
    "tokenize='porter unicode61')",
    "CREATE TRIGGER diary_fts_ai AFTER INSERT ON agent_diary BEGIN "
    "INSERT INTO diary_fts(rowid, seat, body) VALUES (new.id, 's' || new.seat_id, new.content); END",
    "CREATE TRIGGER diary_fts_ad AFTER DELETE ON agent_diary BEGIN DELETE FROM diary_fts WHERE rowid = old.id; END",
    "CREATE TRIGGER diary_fts_au AFTER UPDATE OF seat_id, content ON agent_diary BEGIN "
    "DELETE FROM diary_fts WHERE rowid = old.id; "
    "INSERT INTO diary_fts(rowid, seat, body) VALUES (new.id, 's' || new.seat_id, new.content); END",
    "INSERT INTO diary_fts(rowid, seat, body) SELECT id, 's' || seat_id, content FROM agent_diary",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS diary_fts_au",
    "DROP TRIGGER IF EXISTS diary_fts_ad",
    "DROP TRIGGER IF EXISTS diary_fts_ai",
    "DROP TABLE IF EXISTS diary_fts",
]
PG_FORWARD = [
    "ALTER TABLE agent_diary ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS "
    "(to_tsvector('english'::regconfig, content)) STORED",
    "ALTER TABLE agent_diary ADD COLUMN search_len integer GENERATED ALWAYS AS "
    "(length(to_tsvector('english'::regconfig, content))) STORED",
    "CREATE INDEX agent_diary_search_tsv ON agent_diary USING GIN (search_tsv)",
]
PG_BACKWARD = [
    "DROP INDEX IF EXISTS agent_diary_search_tsv",
    "ALTER TABLE agent_diary DROP COLUMN IF EXISTS search_len",
    "ALTER TABLE agent_diary DROP COLUMN IF EXISTS search_tsv",
]


def _run(statements_by_vendor):
    def run(apps, schema_editor):
        for sql in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):

    dependencies = [
        ("learning", "0010_episode_fts_per_seat"),
    ]

    operations = [
        migrations.RunPython(
            _run({"sqlite": SQLITE_FORWARD, "postgresql": PG_FORWARD}),
            _run({"sqlite": SQLITE_BACKWARD, "postgresql": PG_BACKWARD}),
        ),
    ]
