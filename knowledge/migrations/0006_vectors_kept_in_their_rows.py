# PostgreSQL: knowledge pages' vectors kept in their rows (core.vector_storage); SQLite: nothing.

from django.db import migrations

from core.vector_storage import keep_inline


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0005_page_search")]

    operations = [keep_inline("knowledge_page")]
