"""Takes over the ``learning_event`` table from the learning app (state only; no SQL)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("crewlet", "0001_initial"),
        ("learning", "0004_event_moves_to_core"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Event",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("name", models.CharField(max_length=80)),
                        ("turn_id", models.CharField(blank=True, max_length=200)),
                        ("trace_id", models.CharField(blank=True, max_length=200)),
                        ("payload", models.JSONField(default=dict)),
                        ("created_at", models.DateTimeField(auto_now_add=True, db_index=True)),
                        (
                            "seat",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to="crewlet.seat",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "learning_event",
                        "ordering": ["-created_at", "-id"],
                        "indexes": [
                            models.Index(fields=["name", "created_at"], name="learning_ev_name_11fb59_idx"),
                            models.Index(fields=["seat", "name", "created_at"], name="learning_ev_seat_id_3d5eef_idx"),
                            models.Index(fields=["turn_id"], name="learning_ev_turn_id_2bdfb2_idx"),
                        ],
                    },
                ),
            ],
        ),
    ]
