"""Where the shared development corpus of real Claude Code sessions is, when it is beside the repository.

It is never copied into the repository: tests read it from ``../shared/bench-data/claude-code``
(CI has a copy of shared/ beside the clone) and skip what needs it when it is absent.
``CREWLET_BENCH_DATA`` points elsewhere; where else it is looked for is ``tests/dev_data.py``'s.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dev_data import bench_data

BENCH_DATA = bench_data()
CLAUDE_CODE = BENCH_DATA / "claude-code"


def dev_files() -> list[Path]:
    return sorted(CLAUDE_CODE.glob("*/*.jsonl")) if CLAUDE_CODE.is_dir() else []


needs_dev_corpus = pytest.mark.skipif(not dev_files(), reason="no ../shared/bench-data/claude-code beside the repository")
