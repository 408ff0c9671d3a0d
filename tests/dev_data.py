"""Where the development data sets are: never copied into the repository, read where they lie.

``CREWLET_BENCH_DATA`` names the folder; else ``shared/bench-data`` beside the checkout (as CI lays
it), else beside the checkout's parent (a worktree one level deeper, e.g. ``/work/wt/NAME``). A
test that needs the data skips without it, and fails under CI, where the data is always laid.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def bench_data() -> Path:
    """The bench-data folder, or the first place it was looked for when it is nowhere."""
    named = os.environ.get("CREWLET_BENCH_DATA")
    if named:
        return Path(named)
    places = [ROOT.parent / "shared" / "bench-data", ROOT.parent.parent / "shared" / "bench-data"]
    return next((p for p in places if p.is_dir()), places[0])


def require(relative: str) -> Path:
    """A file or folder of the bench data; skips (fails under CI) when it is not there."""
    path = bench_data() / relative
    if not path.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"the dev data is missing at {path} (set CREWLET_BENCH_DATA)")
        pytest.skip(f"the dev data is not at {path} (set CREWLET_BENCH_DATA)")
    return path


def tau_runs() -> list[dict]:
    return json.loads(require("tau-bench/airline-dev.json").read_text())


def locomo() -> list[dict]:
    return json.loads(require("locomo/locomo-dev.json").read_text())


def locomo_sessions(conversation: dict) -> list[list[dict]]:
    """A LoCoMo conversation's sessions in order, each a list of ``{speaker, dia_id, text}``."""
    keys = sorted((k for k in conversation if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1]))
    return [conversation[k] for k in keys if conversation[k]]


def tau_user_messages(run: dict) -> list[str]:
    return [m["content"] for m in run["traj"] if m.get("role") == "user" and m.get("content")]


def tau_tool_rounds(run: dict) -> list[list[str]]:
    """The tools of each assistant message that called any: one agentic-loop iteration each."""
    return [[c["function"]["name"] for c in m["tool_calls"]] for m in run["traj"]
            if m.get("role") == "assistant" and m.get("tool_calls")]


def tau_final_answer(run: dict) -> str:
    said = [m["content"] for m in run["traj"] if m.get("role") == "assistant" and m.get("content")]
    return said[-1] if said else ""
