"""docs/integration.md's "Trying each step": every step's curl line and crewlet_client line run as
written against a live server (the guide's address and token swapped for the test server's)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from learning.models import Turn
from tests.factories import token_for

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "integration.md"
pytestmark = pytest.mark.django_db(transaction=True)


def blocks(kind: str) -> list[str]:
    text = GUIDE.read_text()
    tried = text[text.index("## Trying each step"):text.index("## The MCP server")]
    return re.findall(rf"```{kind}\n(.*?)```", tried, re.S)


def test_every_step_has_a_curl_line_and_a_client_line():
    text = GUIDE.read_text()
    for step in ("## 1. Turn start", "## 2. During the turn", "## 3. After the turn"):
        section = text[text.index(step):]
        section = section[:section.index("\n## ", 1)]
        assert "curl -s" in section and "crewlet." in section, step


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_curl_lines_run_against_a_server(live_server, seat):
    script = "\n".join(blocks("sh")).replace("http://127.0.0.1:8000", live_server.url)
    script = re.sub(r"^TOKEN=.*$", f"TOKEN={token_for(seat)}", script, flags=re.M)
    done = subprocess.run(["bash", "-euc", script.replace("\\\n", " ")], capture_output=True, text=True, timeout=120,
                          env={**os.environ})
    assert done.returncode == 0, done.stderr
    assert '"status": "accepted"' in done.stdout and '"prompt"' in done.stdout and '"tool": "query_episodes"' in done.stdout
    assert Turn.objects.filter(seat=seat, run_id="try-1").exists()


def test_the_client_lines_run_against_a_server(live_server, seat):
    code = "\n".join(blocks("python")).replace("http://127.0.0.1:8000", live_server.url)
    code = re.sub(r"^token = .*$", f"token = {token_for(seat)!r}", code, flags=re.M)
    exec(compile(code, str(GUIDE), "exec"), {})
    assert Turn.objects.filter(seat=seat, run_id="try-1").exists()
