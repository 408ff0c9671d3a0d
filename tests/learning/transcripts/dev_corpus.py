"""Where the shared development corpus of real Claude Code sessions is, when it is beside the repository.

It is never copied into the repository: tests read it from ``../shared/bench-data/claude-code``
(CI has a copy of shared/ beside the clone) and skip what needs it when it is absent.
``CREWLET_BENCH_DATA`` points elsewhere (a developer's worktree that has no shared/ beside it).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
BENCH_DATA = Path(os.environ.get("CREWLET_BENCH_DATA") or ROOT.parent / "shared" / "bench-data")
CLAUDE_CODE = BENCH_DATA / "claude-code"


def dev_files() -> list[Path]:
    return sorted(CLAUDE_CODE.glob("*/*.jsonl")) if CLAUDE_CODE.is_dir() else []


needs_dev_corpus = pytest.mark.skipif(not dev_files(), reason="no ../shared/bench-data/claude-code beside the repository")
