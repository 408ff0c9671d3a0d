"""The WSGI application a server worker imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_worker_has_every_route_loaded_before_its_first_request(tmp_path, empty_database):
    """Importing the application loads the URLconf (every app's router), so a fresh worker's first
    request does not wait for it."""
    config = tmp_path / "crewlet.toml"
    config.write_text('[company]\nname = "Acme"\n[providers.embeddings]\nkind = "hashing"\n')
    script = (
        "import sys\n"
        "import crewlet.wsgi\n"
        "from django.urls import get_resolver\n"
        "print('url_patterns' in vars(get_resolver()), 'learning.intake.api' in sys.modules)\n"
    )
    env = {"DATABASE_URL": empty_database, "CREWLET_CONFIG": str(config), "CREWLET_VAR_DIR": str(tmp_path),
           "PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "crewlet.settings"}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "True"]
