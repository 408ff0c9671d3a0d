# An episode's pieces are now the opening lines of its ask's own messages (the last sender's), not
# the context delivered with it (learning.episodes.own_lines). The stored line vectors are derived
# data: they are dropped, and the embedding fill recomputes them by the new rule from the rows alone
# (no turn loses its text, its whole vector or its full-text entry).

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("learning", "0012_episode_newest_first"),
    ]

    operations = [
        migrations.RunSQL("DELETE FROM episode_pieces", reverse_sql=migrations.RunSQL.noop),
    ]
