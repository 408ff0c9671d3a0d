"""The ``learning_health`` SQL view: a per-seat rollup of ``synthesized_skills`` (spec: Telemetry harness).

Every skill row counts, archived ones included: a library the curator trimmed to its used
skills would otherwise report reuse it never had. An age is never negative: a skill stamped in
the future (clock skew, an imported row) counts as brand new.

The learning app's migration creates it. PostgreSQL cannot retype a column of ``synthesized_skills``
while the view reads it: a migration that does drops the view first and creates it again after.
"""

from __future__ import annotations

VIEW_NAME = "learning_health"

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
