# PostgreSQL: each posting carries its row's length (``len``: the row's search_len, its tsvector's distinct lexemes),
# in the primary key's INCLUDE beside tf, so the text half of a search scores BM25 from the seat's postings alone,
# index only, without joining them to the scope's rows (core.hybrid, ``_pg_postings_text``). Filled here for the
# postings already stored; the insert and update triggers (0015) write it from then on (a row's length changes only
# with its search_tsv, which is when the update trigger rewrites its postings). SQLite: nothing.

from django.db import migrations

TABLES = {"episodes_postings": "episodes", "agent_diary_postings": "agent_diary"}
TF = "COALESCE(array_length(u.positions, 1), 1)"


def _functions(postings: str, table: str, *, with_len: bool) -> list[str]:
    fn = f"crewlet_{postings}"
    cols, new_len, row_len = ("(seat_id, lexeme, row_id, tf, len)", ", n.search_len", ", NEW.search_len") if with_len \
        else ("(seat_id, lexeme, row_id, tf)", "", "")
    return [
        f"CREATE OR REPLACE FUNCTION {fn}_ins() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        f" INSERT INTO {postings} {cols} SELECT n.seat_id, u.lexeme, n.id, {TF}{new_len}"
        " FROM new_rows n CROSS JOIN LATERAL unnest(n.search_tsv) u WHERE n.seat_id IS NOT NULL;"
        " RETURN NULL; END $$",
        f"CREATE OR REPLACE FUNCTION {fn}_upd() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        f" DELETE FROM {postings} WHERE seat_id = OLD.seat_id AND row_id = OLD.id"
        " AND lexeme = ANY (tsvector_to_array(OLD.search_tsv));"
        f" INSERT INTO {postings} {cols} SELECT NEW.seat_id, u.lexeme, NEW.id, {TF}{row_len}"
        " FROM unnest(NEW.search_tsv) u WHERE NEW.seat_id IS NOT NULL;"
        " RETURN NULL; END $$",
    ]


def forward_sql(postings: str, table: str) -> list[str]:
    return [
        f"ALTER TABLE {postings} ADD COLUMN len integer",
        f"UPDATE {postings} p SET len = t.search_len FROM {table} t WHERE t.id = p.row_id",
        f"ALTER TABLE {postings} ALTER COLUMN len SET NOT NULL",
        f"ALTER TABLE {postings} DROP CONSTRAINT {postings}_pkey,"
        f" ADD CONSTRAINT {postings}_pkey PRIMARY KEY (seat_id, lexeme, row_id) INCLUDE (tf, len)",
        *_functions(postings, table, with_len=True),
        f"ANALYZE {postings}",
    ]


def backward_sql(postings: str, table: str) -> list[str]:
    return [
        *_functions(postings, table, with_len=False),
        f"ALTER TABLE {postings} DROP CONSTRAINT {postings}_pkey,"
        f" ADD CONSTRAINT {postings}_pkey PRIMARY KEY (seat_id, lexeme, row_id) INCLUDE (tf)",
        f"ALTER TABLE {postings} DROP COLUMN len",
    ]


def _run(forward: bool):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for postings, table in TABLES.items():
            for sql in (forward_sql if forward else backward_sql)(postings, table):
                schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):
    dependencies = [("learning", "0017_drop_unread_search_tsv_indexes")]

    operations = [migrations.RunPython(_run(True), _run(False))]
