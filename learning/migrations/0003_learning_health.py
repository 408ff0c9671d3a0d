"""The ``learning_health`` view, vendor SQL per engine (in ``learning.health_sql_view``), and its model."""

import django.db.models.deletion
from django.db import migrations, models

from learning import health_sql_view


def create_view(apps, schema_editor):
    health_sql_view.create_from_migration(schema_editor)


def drop_view(apps, schema_editor):
    health_sql_view.drop(schema_editor)


class Migration(migrations.Migration):

    dependencies = [
        ("crewlet", "0001_initial"),
        ("learning", "0002_reflection"),
    ]

    operations = [
        migrations.RunPython(create_view, drop_view),
        migrations.CreateModel(
            name="LearningHealth",
            fields=[
                ("seat", models.OneToOneField(db_column="seat_id", on_delete=django.db.models.deletion.DO_NOTHING, primary_key=True, related_name="+", serialize=False, to="crewlet.seat")),
                ("total_skills", models.BigIntegerField()),
                ("skills_used_at_least_once", models.BigIntegerField()),
                ("total_skill_uses", models.BigIntegerField()),
                ("most_recent_skill_use", models.DateTimeField(null=True)),
                ("avg_uses_per_skill", models.FloatField(null=True)),
                ("avg_skill_age_days", models.FloatField(null=True)),
            ],
            options={
                "verbose_name": "learning health (per seat)",
                "verbose_name_plural": "learning health (per seat)",
                "db_table": "learning_health",
                "managed": False,
            },
        ),
    ]
