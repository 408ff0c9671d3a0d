# PostgreSQL: each seat's row count and total length beside its postings (core.hybrid, ``_pg_postings_text``), so
# a search of a seat's corpus reads BM25's document count and average length from one row instead of counting the
# seat's rows in the scan of them:
# - episodes_postings_stats (episodes) and agent_diary_postings_stats (agent_diary): one row per seat, ``rows`` (the
#   seat's rows in the table) and ``total_len`` (the sum of their search_len), built here for the rows stored;
# - kept by the postings' own trigger functions (0015, 0018), replaced here: an INSERT or DELETE statement's rows
#   counted per seat through its transition table (one upsert a seat a statement, seats in order: two statements
#   writing the same seats lock their rows in the same order), an UPDATE that moves a row to
#   another seat or changes its text row by row, a TRUNCATE empties them.
# SQLite: nothing (FTS5's bm25() keeps its own counts).

from django.db import migrations

TABLES = {"episodes_postings": "episodes", "agent_diary_postings": "agent_diary"}
TF = "COALESCE(array_length(u.positions, 1), 1)"


def _added(stats: str) -> str:
    """An INSERT of (seat, rows, total_len) into ``stats`` made an addition to the seat's row when it has one."""
    return (f" ON CONFLICT (seat_id) DO UPDATE SET rows = {stats}.rows + EXCLUDED.rows,"
            f" total_len = {stats}.total_len + EXCLUDED.total_len")


def _functions(postings: str, *, with_stats: bool) -> list[str]:
    fn, stats = f"crewlet_{postings}", f"{postings}_stats"
    counted_in = (f" INSERT INTO {stats} (seat_id, rows, total_len) SELECT n.seat_id, COUNT(*), SUM(COALESCE(n.search_len, 0))"
                  f" FROM new_rows n WHERE n.seat_id IS NOT NULL GROUP BY n.seat_id ORDER BY n.seat_id{_added(stats)};") if with_stats else ""
    counted_out = (f" UPDATE {stats} s SET rows = s.rows - o.rows, total_len = s.total_len - o.len FROM"
                   " (SELECT seat_id, COUNT(*) AS rows, SUM(COALESCE(search_len, 0)) AS len FROM old_rows"
                   " WHERE seat_id IS NOT NULL GROUP BY seat_id) o WHERE s.seat_id = o.seat_id;") if with_stats else ""
    moved = (f" UPDATE {stats} SET rows = rows - 1, total_len = total_len - COALESCE(OLD.search_len, 0)"
             " WHERE seat_id = OLD.seat_id;"
             f" INSERT INTO {stats} (seat_id, rows, total_len) SELECT NEW.seat_id, 1, COALESCE(NEW.search_len, 0)"
             f" WHERE NEW.seat_id IS NOT NULL{_added(stats)};") if with_stats else ""
    emptied = f" TRUNCATE {stats};" if with_stats else ""
    return [
        f"CREATE OR REPLACE FUNCTION {fn}_ins() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        f" INSERT INTO {postings} (seat_id, lexeme, row_id, tf, len) SELECT n.seat_id, u.lexeme, n.id, {TF}, n.search_len"
        f" FROM new_rows n CROSS JOIN LATERAL unnest(n.search_tsv) u WHERE n.seat_id IS NOT NULL;{counted_in}"
        " RETURN NULL; END $$",
        f"CREATE OR REPLACE FUNCTION {fn}_del() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        f" DELETE FROM {postings} WHERE ctid = ANY (ARRAY(SELECT k.ctid FROM old_rows o"
        " CROSS JOIN LATERAL unnest(tsvector_to_array(o.search_tsv)) l CROSS JOIN LATERAL"
        f" (SELECT p.ctid FROM {postings} p WHERE p.seat_id = o.seat_id AND p.lexeme = l AND p.row_id = o.id OFFSET 0) k));"
        f"{counted_out} RETURN NULL; END $$",
        f"CREATE OR REPLACE FUNCTION {fn}_upd() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        f" DELETE FROM {postings} WHERE seat_id = OLD.seat_id AND row_id = OLD.id"
        " AND lexeme = ANY (tsvector_to_array(OLD.search_tsv));"
        f" INSERT INTO {postings} (seat_id, lexeme, row_id, tf, len) SELECT NEW.seat_id, u.lexeme, NEW.id, {TF}, NEW.search_len"
        f" FROM unnest(NEW.search_tsv) u WHERE NEW.seat_id IS NOT NULL;{moved}"
        " RETURN NULL; END $$",
        f"CREATE OR REPLACE FUNCTION {fn}_trunc() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        f" TRUNCATE {postings};{emptied} RETURN NULL; END $$",
    ]


def forward_sql(postings: str, table: str) -> list[str]:
    stats = f"{postings}_stats"
    return [
        f"CREATE TABLE {stats} (seat_id bigint PRIMARY KEY, rows bigint NOT NULL, total_len bigint NOT NULL)",
        f"INSERT INTO {stats} (seat_id, rows, total_len) SELECT seat_id, COUNT(*), SUM(COALESCE(search_len, 0))"
        f" FROM {table} WHERE seat_id IS NOT NULL GROUP BY seat_id",
        *_functions(postings, with_stats=True),
        f"ANALYZE {stats}",
    ]


def backward_sql(postings: str, table: str) -> list[str]:
    return [*_functions(postings, with_stats=False), f"DROP TABLE IF EXISTS {postings}_stats"]


def _run(forward: bool):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for postings, table in TABLES.items():
            for sql in (forward_sql if forward else backward_sql)(postings, table):
                schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):
    dependencies = [("learning", "0019_vectors_kept_in_their_rows")]

    operations = [migrations.RunPython(_run(True), _run(False))]
