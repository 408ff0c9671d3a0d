# PostgreSQL: each seat's words as postings (core.hybrid, Corpus.postings): one row per (seat, lexeme, row) with
# the lexeme's term frequency in the row (its positions in the row's search_tsv, as the scorer counted them), a
# btree on (seat_id, lexeme, row_id) that carries tf, so the text half of a search reads only the seat's postings
# of the query's lexemes, index only -- no tsvector is copied, matched or unnested per row.
# - episodes_postings (episodes) and agent_diary_postings (agent_diary), built here for the rows already stored;
# - kept by triggers on every writer: an INSERT or DELETE statement's rows through its transition table (one
#   statement a bulk insert), an UPDATE row by row only when its seat or its search_tsv changed (the embedding
#   fill, a use count, an outcome change nothing), a TRUNCATE empties them.
# SQLite: nothing (its FTS5 indexes already hold each seat's own tokens, 0014).

from django.db import migrations

TABLES = {"episodes_postings": "episodes", "agent_diary_postings": "agent_diary"}
TF = "COALESCE(array_length(u.positions, 1), 1)"


def forward_sql(postings: str, table: str) -> list[str]:
    fn = f"crewlet_{postings}"
    return [
        f"CREATE TABLE {postings} (seat_id bigint NOT NULL, lexeme text NOT NULL, row_id bigint NOT NULL,"
        f" tf integer NOT NULL, CONSTRAINT {postings}_pkey PRIMARY KEY (seat_id, lexeme, row_id) INCLUDE (tf))",
        f"INSERT INTO {postings} (seat_id, lexeme, row_id, tf) SELECT t.seat_id, u.lexeme, t.id, {TF}"
        f" FROM {table} t CROSS JOIN LATERAL unnest(t.search_tsv) u WHERE t.seat_id IS NOT NULL",
        f"CREATE FUNCTION {fn}_ins() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        f" INSERT INTO {postings} (seat_id, lexeme, row_id, tf) SELECT n.seat_id, u.lexeme, n.id, {TF}"
        " FROM new_rows n CROSS JOIN LATERAL unnest(n.search_tsv) u WHERE n.seat_id IS NOT NULL;"
        " RETURN NULL; END $$",
        # each deleted row's postings found by their key (OFFSET 0: one index probe each, never a join the planner
        # could turn into a scan of every posting -- 2,000 rows of 14 lexemes: 500 ms that way, 80 ms this way)
        f"CREATE FUNCTION {fn}_del() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        f" DELETE FROM {postings} WHERE ctid = ANY (ARRAY(SELECT k.ctid FROM old_rows o"
        " CROSS JOIN LATERAL unnest(tsvector_to_array(o.search_tsv)) l CROSS JOIN LATERAL"
        f" (SELECT p.ctid FROM {postings} p WHERE p.seat_id = o.seat_id AND p.lexeme = l AND p.row_id = o.id OFFSET 0) k));"
        " RETURN NULL; END $$",
        f"CREATE FUNCTION {fn}_upd() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        f" DELETE FROM {postings} WHERE seat_id = OLD.seat_id AND row_id = OLD.id"
        " AND lexeme = ANY (tsvector_to_array(OLD.search_tsv));"
        f" INSERT INTO {postings} (seat_id, lexeme, row_id, tf) SELECT NEW.seat_id, u.lexeme, NEW.id, {TF}"
        " FROM unnest(NEW.search_tsv) u WHERE NEW.seat_id IS NOT NULL;"
        " RETURN NULL; END $$",
        f"CREATE FUNCTION {fn}_trunc() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        f" TRUNCATE {postings}; RETURN NULL; END $$",
        f"CREATE TRIGGER {postings}_ai AFTER INSERT ON {table} REFERENCING NEW TABLE AS new_rows"
        f" FOR EACH STATEMENT EXECUTE FUNCTION {fn}_ins()",
        f"CREATE TRIGGER {postings}_ad AFTER DELETE ON {table} REFERENCING OLD TABLE AS old_rows"
        f" FOR EACH STATEMENT EXECUTE FUNCTION {fn}_del()",
        f"CREATE TRIGGER {postings}_au AFTER UPDATE ON {table} FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id"
        " OR OLD.seat_id IS DISTINCT FROM NEW.seat_id OR OLD.search_tsv IS DISTINCT FROM NEW.search_tsv)"
        f" EXECUTE FUNCTION {fn}_upd()",
        f"CREATE TRIGGER {postings}_at AFTER TRUNCATE ON {table} FOR EACH STATEMENT EXECUTE FUNCTION {fn}_trunc()",
        f"ANALYZE {postings}",
    ]


def backward_sql(postings: str, table: str) -> list[str]:
    fn = f"crewlet_{postings}"
    return ([f"DROP TRIGGER IF EXISTS {postings}_{t} ON {table}" for t in ("at", "au", "ad", "ai")]
            + [f"DROP FUNCTION IF EXISTS {fn}_{f}()" for f in ("trunc", "upd", "del", "ins")]
            + [f"DROP TABLE IF EXISTS {postings}"])


PG_FORWARD = [sql for postings, table in TABLES.items() for sql in forward_sql(postings, table)]
PG_BACKWARD = [sql for postings, table in TABLES.items() for sql in backward_sql(postings, table)]


def _run(statements):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for sql in statements:
                schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):

    dependencies = [
        ("learning", "0014_fts_seat_tokens"),
    ]

    operations = [
        migrations.RunPython(_run(PG_FORWARD), _run(PG_BACKWARD)),
    ]
