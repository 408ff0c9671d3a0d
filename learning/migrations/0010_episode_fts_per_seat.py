# Episode full-text search scored per seat (core.hybrid):
# - SQLite: episodes_fts gains a leading "seat" column ("s<seat id>"), so one MATCH scores only the
#   seat's rows; the triggers write it; the index is rebuilt for the rows already stored.
# - PostgreSQL: search_len, the length of the searchable text's tsvector (its distinct lexemes), the
#   BM25 scorer's document length, generated like search_tsv from the same text.
# - Both: the stored line vectors (episode_pieces) are dropped: a turn's pieces are now its ask's
#   opening lines (learning.episodes.search_pieces), and the embedding fill recomputes them by that
#   rule from the rows alone (derived data; no turn loses its text or its whole vector).

from django.db import migrations

TEXT = (
    "(CASE WHEN instr({p}ask, {p}task_summary) > 0 THEN '' ELSE {p}task_summary END"
    " || char(10) || {p}ask || char(10) || {p}plan_summary)"
)
NEW, BARE = TEXT.format(p="new."), TEXT.format(p="")
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS episodes_fts_au",
    "DROP TRIGGER IF EXISTS episodes_fts_ad",
    "DROP TRIGGER IF EXISTS episodes_fts_ai",
    "DROP TABLE IF EXISTS episodes_fts",
]


def sqlite_index(columns: str, seat: bool) -> list[str]:
    head, new_seat, bare_seat = ("seat, ", "'s' || new.seat_id, ", "'s' || seat_id, ") if seat else ("", "", "")
    return [
        f"CREATE VIRTUAL TABLE episodes_fts USING fts5({columns}, content='', contentless_delete=1, "
        "tokenize='porter unicode61')",
        f"CREATE TRIGGER episodes_fts_ai AFTER INSERT ON episodes BEGIN "
        f"INSERT INTO episodes_fts(rowid, {head}body) VALUES (new.id, {new_seat}{NEW}); END",
        "CREATE TRIGGER episodes_fts_ad AFTER DELETE ON episodes BEGIN "
        "DELETE FROM episodes_fts WHERE rowid = old.id; END",
        f"CREATE TRIGGER episodes_fts_au AFTER UPDATE OF seat_id, task_summary, ask, plan_summary ON episodes BEGIN "
        f"DELETE FROM episodes_fts WHERE rowid = old.id; "
        f"INSERT INTO episodes_fts(rowid, {head}body) VALUES (new.id, {new_seat}{NEW}); END",
        f"INSERT INTO episodes_fts(rowid, {head}body) SELECT id, {bare_seat}{BARE} FROM episodes",
    ]


RECOMPUTE_PIECES = "DELETE FROM episode_pieces"
SQLITE_FORWARD = SQLITE_DROP + sqlite_index("seat, body", seat=True) + [RECOMPUTE_PIECES]
SQLITE_BACKWARD = SQLITE_DROP + sqlite_index("body", seat=False)
PG_FORWARD = [
    "ALTER TABLE episodes ADD COLUMN search_len integer GENERATED ALWAYS AS (length(to_tsvector('english'::regconfig, "
    "(CASE WHEN strpos(ask, task_summary) > 0 THEN '' ELSE task_summary END) || ' ' || ask || ' ' || plan_summary"
    "))) STORED",
    RECOMPUTE_PIECES,
]
PG_BACKWARD = ["ALTER TABLE episodes DROP COLUMN IF EXISTS search_len"]


def _run(statements_by_vendor):
    def run(apps, schema_editor):
        for sql in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):

    dependencies = [
        ("learning", "0009_promotion_draft"),
    ]

    operations = [
        migrations.RunPython(
            _run({"sqlite": SQLITE_FORWARD, "postgresql": PG_FORWARD}),
            _run({"sqlite": SQLITE_BACKWARD, "postgresql": PG_BACKWARD}),
        ),
    ]
