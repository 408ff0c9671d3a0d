# PostgreSQL: transcript shards' vectors kept in their rows (core.vector_storage); SQLite: nothing.

from django.db import migrations

from core.vector_storage import keep_inline


class Migration(migrations.Migration):
    dependencies = [("transcripts", "0001_initial")]

    operations = [keep_inline("transcripts_shard")]
