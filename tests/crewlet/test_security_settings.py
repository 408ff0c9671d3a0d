"""The production settings: no secret key written in the source, ``check --deploy`` clean."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def production_env(var: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    return {**env, "CREWLET_VAR_DIR": str(var), "CREWLET_CONFIG": str(var / "crewlet.toml"),
            "DJANGO_SETTINGS_MODULE": "crewlet.settings", **extra}


def secret_key(env: dict) -> str:
    code = "import django; django.setup(); from django.conf import settings; print(settings.SECRET_KEY)"
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_without_django_secret_key_each_installation_gets_its_own_random_key(tmp_path):
    one, other = tmp_path / "one", tmp_path / "other"
    one.mkdir(), other.mkdir()
    key = secret_key(production_env(one))
    assert key != "dev-only-not-secret-crewlet" and len(key) >= 50
    assert secret_key(production_env(one)) == key  # every process of the installation reads the same one
    assert (one / "secret_key").read_text().strip() == key
    assert stat.S_IMODE((one / "secret_key").stat().st_mode) == 0o600
    assert secret_key(production_env(other)) != key
    assert secret_key(production_env(one, DJANGO_SECRET_KEY="from-the-environment")) == "from-the-environment"


def test_check_deploy_is_clean_under_the_production_settings(tmp_path):
    done = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                          env=production_env(tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "no issues" in done.stdout
