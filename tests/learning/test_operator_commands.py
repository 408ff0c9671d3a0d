"""Operator commands as an operator meets them: one-line errors, the embedder loaded before the
first item, progress bars that stay whole when a warning is logged, and an unmigrated database."""

from __future__ import annotations

import io
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from core.providers.embeddings import warm
from learning.management.commands._progress import bar

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("since", ["2026-13-45", "yesterday", "2026-02-30"])
def test_reflect_backlog_names_a_bad_date_in_one_line(db, since):
    with pytest.raises(CommandError) as err:
        call_command("reflect_backlog", "--since", since, stdout=io.StringIO())
    assert str(err.value) == f"--since: {since!r} is not a date (YYYY-MM-DD)"


def test_reflect_backlog_loads_the_embedder_before_its_first_turn(seat, monkeypatch):
    from learning.intake import turns
    from learning.intake.record import TurnRecord
    from tests.learning.reflection.conftest import record

    turns.store_turn(seat=seat, record=TurnRecord.model_validate(record(seat)))
    warm.reset()
    out = io.StringIO()
    call_command("reflect_backlog", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("embedder hashing/hashing-256 loaded in") and warm.warmed()
    assert lines[1].startswith("1 turn(s) without a reflection: 1 ")


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_warning_logged_mid_bar_prints_above_the_bar_not_through_it(capsys):
    with bar(_Terminal(), total=3, desc="reflecting", unit="turn") as advance:
        advance()
        logging.getLogger("learning.reflection").warning("turn 7: embed failed")
        advance()
    err = capsys.readouterr().err
    # a terminal shows what follows the last carriage return of a line: split on both
    warning_line = next(seg for seg in re.split(r"[\r\n]", err) if "turn 7: embed failed" in seg)
    assert "reflecting" not in warning_line  # the warning is its own line, not spliced into the bar


def test_a_command_on_an_unmigrated_database_says_to_run_migrate(tmp_path, empty_database):
    env = {**os.environ, "DATABASE_URL": empty_database,
           "CREWLET_CONFIG": str(tmp_path / "none.toml"), "CREWLET_VAR_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "manage.py", "create_seat_token", "ana"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [done.stderr.strip()]
    assert "is not migrated" in done.stderr and "Run `manage.py migrate` first." in done.stderr
