# PostgreSQL: episodes', notes' and episode pieces' vectors kept in their rows (core.vector_storage);
# SQLite: nothing.

from django.db import migrations

from core.vector_storage import keep_inline


class Migration(migrations.Migration):
    dependencies = [("learning", "0018_postings_row_length")]

    operations = [keep_inline("episodes", "agent_diary", "episode_pieces")]
