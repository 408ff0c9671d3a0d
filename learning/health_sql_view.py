"""The ``learning_health`` SQL view: a per-seat rollup of ``synthesized_skills`` (spec: Telemetry harness).

Every skill row counts, archived ones included: a library the curator trimmed to its used
skills would otherwise report reuse it never had. An age is never negative: a skill stamped in
the future (clock skew, an imported row) counts as brand new.

A view pins the table under it: PostgreSQL cannot retype the columns of ``synthesized_skills``
while the view exists. So every ``migrate`` drops the view before it runs and recreates it after, once the
migration that introduced it is applied; the migration itself creates it at once only when it
is the learning app's newest migration, and otherwise leaves it to the end of the run, so a
later migration of the skills table in the same run needs no care either.
"""

from __future__ import annotations

VIEW_NAME = "learning_health"
INTRODUCED_BY = ("learning", "0003_learning_health")

VIEW_SQL = """
CREATE VIEW learning_health AS
SELECT
    seat_id AS seat_id,
    COUNT(*)::bigint AS total_skills,
    (COUNT(*) FILTER (WHERE use_count > 0))::bigint AS skills_used_at_least_once,
    COALESCE(SUM(use_count), 0)::bigint AS total_skill_uses,
    MAX(last_used_at) AS most_recent_skill_use,
    (COALESCE(SUM(use_count), 0)::double precision / COUNT(*)) AS avg_uses_per_skill,
    AVG(GREATEST(0.0, EXTRACT(EPOCH FROM (now() - created_at)) / 86400.0))::double precision AS avg_skill_age_days
FROM synthesized_skills
GROUP BY seat_id
"""

def create(schema_editor_or_cursor) -> None:
    schema_editor_or_cursor.execute(f"DROP VIEW IF EXISTS {VIEW_NAME}")
    schema_editor_or_cursor.execute(VIEW_SQL)


def drop(schema_editor_or_cursor) -> None:
    schema_editor_or_cursor.execute(f"DROP VIEW IF EXISTS {VIEW_NAME}")


def is_newest_learning_migration(connection) -> bool:
    from django.db.migrations.loader import MigrationLoader

    leaves = MigrationLoader(connection, ignore_no_migrations=True).graph.leaf_nodes(INTRODUCED_BY[0])
    return leaves == [INTRODUCED_BY]


def create_from_migration(schema_editor) -> None:
    if is_newest_learning_migration(schema_editor.connection):
        create(schema_editor)
    # otherwise recreate_after_migrate creates it once every migration of this run has applied


def _is_learning(sender) -> bool:
    return getattr(sender, "label", None) == "learning"


def drop_before_migrate(sender, using="default", **kwargs) -> None:
    from django.db import connections

    if _is_learning(sender):
        with connections[using].cursor() as cursor:
            drop(cursor)


def recreate_after_migrate(sender, using="default", **kwargs) -> None:
    from django.db import connections
    from django.db.migrations.recorder import MigrationRecorder

    if not _is_learning(sender):
        return
    connection = connections[using]
    recorder = MigrationRecorder(connection)
    if not recorder.has_table() or INTRODUCED_BY not in recorder.applied_migrations():
        return
    with connection.cursor() as cursor:
        create(cursor)


def connect_signals() -> None:
    from django.db.models.signals import post_migrate, pre_migrate

    pre_migrate.connect(drop_before_migrate, dispatch_uid="learning_health_drop")
    post_migrate.connect(recreate_after_migrate, dispatch_uid="learning_health_create")
