# Full-text index of native pages for the hybrid knowledge search (core.hybrid):
# - SQLite: page_fts (FTS5, contentless) of the title and the body, kept by triggers (bm25 weighs the
#   title double);
# - PostgreSQL: search_tsv (generated: the title weighted A, the body D; GIN index) and search_len
#   (its length, BM25's document length).
# Both are built for the pages already stored when the migration runs.

from django.db import migrations

SQLITE_FORWARD = [
    "CREATE VIRTUAL TABLE page_fts USING fts5(title, body, content='', contentless_delete=1, "
    "tokenize='porter unicode61')",
    "CREATE TRIGGER page_fts_ai AFTER INSERT ON knowledge_page BEGIN "
    "INSERT INTO page_fts(rowid, title, body) VALUES (new.id, new.title, new.body); END",
    "CREATE TRIGGER page_fts_ad AFTER DELETE ON knowledge_page BEGIN DELETE FROM page_fts WHERE rowid = old.id; END",
    "CREATE TRIGGER page_fts_au AFTER UPDATE OF title, body ON knowledge_page BEGIN "
    "DELETE FROM page_fts WHERE rowid = old.id; "
    "INSERT INTO page_fts(rowid, title, body) VALUES (new.id, new.title, new.body); END",
    "INSERT INTO page_fts(rowid, title, body) SELECT id, title, body FROM knowledge_page",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS page_fts_au",
    "DROP TRIGGER IF EXISTS page_fts_ad",
    "DROP TRIGGER IF EXISTS page_fts_ai",
    "DROP TABLE IF EXISTS page_fts",
]
PG_FORWARD = [
    "ALTER TABLE knowledge_page ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS "
    "(setweight(to_tsvector('english'::regconfig, title), 'A') || setweight(to_tsvector('english'::regconfig, body), 'D'))"
    " STORED",
    "ALTER TABLE knowledge_page ADD COLUMN search_len integer GENERATED ALWAYS AS "
    "(length(to_tsvector('english'::regconfig, title || ' ' || body))) STORED",
    "CREATE INDEX knowledge_page_search_tsv ON knowledge_page USING GIN (search_tsv)",
]
PG_BACKWARD = [
    "DROP INDEX IF EXISTS knowledge_page_search_tsv",
    "ALTER TABLE knowledge_page DROP COLUMN IF EXISTS search_len",
    "ALTER TABLE knowledge_page DROP COLUMN IF EXISTS search_tsv",
]


def _run(statements_by_vendor):
    def run(apps, schema_editor):
        for sql in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):

    dependencies = [
        ("knowledge", "0004_page_versions"),
    ]

    operations = [
        migrations.RunPython(
            _run({"sqlite": SQLITE_FORWARD, "postgresql": PG_FORWARD}),
            _run({"sqlite": SQLITE_BACKWARD, "postgresql": PG_BACKWARD}),
        ),
    ]
