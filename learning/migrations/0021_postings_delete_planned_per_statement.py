# PostgreSQL: a DELETE's postings are removed by a statement planned for that DELETE's rows.
#
# The delete trigger functions (0015, 0020) ran their statement as PL/pgSQL runs any: planned once per backend, at
# its first DELETE, and that plan kept. A statement over a transition table has no parameters, so nothing made
# it plan again: a backend whose first DELETE met empty tables (a new install, a worker started before any turn)
# kept a plan that scans the whole postings table for every lexeme of every deleted row. bench/lifecycle.py, whose
# first DELETE is of nothing, then swept 50,000 turns for over ten minutes (733,333 postings scanned per lexeme);
# tests/core/test_hybrid_postings.py counts the scans. The statement is now run by EXECUTE, which plans it for the
# rows at hand each time (a fraction of a millisecond, once a DELETE); the stats update after it is unchanged.
# SQLite: nothing (its triggers are per row, one index probe each).

from django.db import migrations

TABLES = {"episodes_postings": "episodes", "agent_diary_postings": "agent_diary"}


def _delete_function(postings: str, *, execute: bool) -> str:
    fn, stats = f"crewlet_{postings}", f"{postings}_stats"
    delete = (f"DELETE FROM {postings} WHERE ctid = ANY (ARRAY(SELECT k.ctid FROM old_rows o"
              " CROSS JOIN LATERAL unnest(tsvector_to_array(o.search_tsv)) l CROSS JOIN LATERAL"
              f" (SELECT p.ctid FROM {postings} p WHERE p.seat_id = o.seat_id AND p.lexeme = l AND p.row_id = o.id"
              " OFFSET 0) k))")
    counted_out = (f" UPDATE {stats} s SET rows = s.rows - o.rows, total_len = s.total_len - o.len FROM"
                   " (SELECT seat_id, COUNT(*) AS rows, SUM(COALESCE(search_len, 0)) AS len FROM old_rows"
                   " WHERE seat_id IS NOT NULL GROUP BY seat_id) o WHERE s.seat_id = o.seat_id;")
    statement = f"EXECUTE '{delete}';" if execute else f"{delete};"
    return (f"CREATE OR REPLACE FUNCTION {fn}_del() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            f" {statement}{counted_out} RETURN NULL; END $$")


def _run(execute: bool):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for postings in TABLES:
            schema_editor.execute(_delete_function(postings, execute=execute))

    return run


class Migration(migrations.Migration):
    dependencies = [("learning", "0020_postings_seat_stats")]

    operations = [migrations.RunPython(_run(True), _run(False))]
