# PostgreSQL: the GIN indexes on episodes.search_tsv and agent_diary.search_tsv (0006, 0011) are read by no
# search since the seat's postings (0015) serve the text half: they only cost every insert and update of
# those rows (about 50 us a row measured on 20,000 short rows, a third of the insert's time) and their space.
# The tsvector columns stay: the postings' triggers read them. SQLite: nothing.

from django.db import migrations

INDEXES = {"episodes_search_tsv": "episodes", "agent_diary_search_tsv": "agent_diary"}


def _run(forward: bool):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for index, table in INDEXES.items():
            schema_editor.execute(f"DROP INDEX IF EXISTS {index}" if forward
                                  else f"CREATE INDEX IF NOT EXISTS {index} ON {table} USING GIN (search_tsv)")

    return run


class Migration(migrations.Migration):
    dependencies = [("learning", "0016_episode_pieces_cascade_in_database")]

    operations = [migrations.RunPython(_run(True), _run(False))]
