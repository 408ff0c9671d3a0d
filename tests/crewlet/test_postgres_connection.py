"""The database: a bulk insert of any size is stored whole; a DATABASE_URL that is not PostgreSQL is refused."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime


def test_a_bulk_insert_past_the_servers_parameter_limit_stores_every_row(seat):
    from learning.models import Episode

    now = datetime.now(UTC)
    rows = [Episode(seat=seat, run_id=f"bulk-{i}", task_summary=f"task {i}", ask="Fix the failing job.",
                    started_at=now, ended_at=now) for i in range(5000)]
    assert len(rows) * len(Episode._meta.concrete_fields) > 65_535  # more than one statement may bind
    Episode.objects.bulk_create(rows)
    assert Episode.objects.filter(seat=seat, run_id__startswith="bulk-").count() == 5000


def test_a_database_url_that_is_not_postgresql_is_refused_by_name(tmp_path):
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="crewlet.settings", DATABASE_URL=f"sqlite:///{tmp_path}/x.db")
    done = subprocess.run([sys.executable, "-c", "import django; django.setup()"], env=env,
                          capture_output=True, text=True)
    assert done.returncode != 0
    assert "DATABASE_URL must name a PostgreSQL database" in done.stderr
