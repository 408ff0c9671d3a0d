# An episode's pieces are deleted by the database, not by Django's collector. With ``on_delete=CASCADE`` every
# delete of episodes (the lifecycle's sweeps, compaction's folds, a forget) first loaded each episode whole --
# its vector, its texts -- to find its pieces: 9,200 episodes swept held 24.6 MB of Python at once, and the
# memory grew with the sweep. Now ``on_delete=DO_NOTHING`` lets Django send one DELETE, and a trigger removes
# the deleted episodes' pieces in the same statement:
# - SQLite: a row trigger (one probe of the (episode_id, embedding_model) index a deleted episode);
# - PostgreSQL: a statement trigger over the deleted rows' transition table (one join a DELETE).
# The foreign key itself stays (deferred, checked at commit), so a piece can never outlive its episode.

import django.db.models.deletion
from django.db import migrations, models

SQLITE = [
    "CREATE TRIGGER episode_pieces_cascade AFTER DELETE ON episodes BEGIN"
    " DELETE FROM episode_pieces WHERE episode_id = OLD.id; END",
]
SQLITE_BACK = ["DROP TRIGGER IF EXISTS episode_pieces_cascade"]
POSTGRES = [
    "CREATE FUNCTION crewlet_episode_pieces_cascade() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
    " DELETE FROM episode_pieces p USING old_rows o WHERE p.episode_id = o.id; RETURN NULL; END $$",
    "CREATE TRIGGER episode_pieces_cascade AFTER DELETE ON episodes REFERENCING OLD TABLE AS old_rows"
    " FOR EACH STATEMENT EXECUTE FUNCTION crewlet_episode_pieces_cascade()",
]
POSTGRES_BACK = [
    "DROP TRIGGER IF EXISTS episode_pieces_cascade ON episodes",
    "DROP FUNCTION IF EXISTS crewlet_episode_pieces_cascade()",
]


def forward(apps, schema_editor):
    for sql in POSTGRES if schema_editor.connection.vendor == "postgresql" else SQLITE:
        schema_editor.execute(sql)


def backward(apps, schema_editor):
    for sql in POSTGRES_BACK if schema_editor.connection.vendor == "postgresql" else SQLITE_BACK:
        schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [("learning", "0015_pg_postings")]

    operations = [
        migrations.AlterField(
            model_name="episodepiece",
            name="episode",
            field=models.ForeignKey(on_delete=django.db.models.deletion.DO_NOTHING, related_name="pieces",
                                    to="learning.episode"),
        ),
        migrations.RunPython(forward, backward),
    ]
