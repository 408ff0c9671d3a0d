"""The benches' real data, found by format rather than by file name.

DATA is a LoCoMo-format or tau-bench-format JSON file, or a folder holding them at any depth (the
shared ``bench-data`` folder: ``locomo/locomo-dev.json``, ``tau-bench/airline-dev.json``; a held-out
split may name its files otherwise). A file is LoCoMo when its records carry ``conversation`` and
``qa``, tau-bench when they carry ``traj`` and ``task_id``; anything else is passed over.

Several LoCoMo files are one set, each conversation once (by ``sample_id``). Several tau-bench files
(an airline and a retail domain, say) are one set too, each file's task ids kept apart: the second
file's task 4 is not the first's.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

TASK_ID_STRIDE = 100_000  # a later file's task ids are offset by this much per file


def _records(path: Path) -> list | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, list) and data and all(isinstance(r, dict) for r in data) else None


def _kind(records: list[dict]) -> str | None:
    first = records[0]
    if "conversation" in first and "qa" in first:
        return "locomo"
    if "traj" in first and "task_id" in first:
        return "tau"
    return None


@functools.cache
def found(data: str | Path) -> dict[str, list[tuple[Path, list]]]:
    """``{"locomo": [(file, records)], "tau": [...]}`` for every file of either format under ``data``
    (read once a process: the records are shared, never to be changed in place)."""
    root = Path(data)
    paths = [root] if root.is_file() else sorted(root.rglob("*.json"))
    out: dict[str, list[tuple[Path, list]]] = {"locomo": [], "tau": []}
    for path in paths:
        records = _records(path)
        kind = _kind(records) if records else None
        if kind:
            out[kind].append((path, records))
    return out


def locomo(data: str | Path) -> list[dict]:
    """Every LoCoMo conversation under ``data``, each once."""
    seen, out = set(), []
    for _path, records in found(data)["locomo"]:
        for conv in records:
            key = conv.get("sample_id") or id(conv)
            if key not in seen:
                seen.add(key)
                out.append(conv)
    return out


def tau(data: str | Path) -> list[dict]:
    """Every tau-bench run under ``data``; a later file's task ids offset so no two files share one."""
    out = []
    for k, (_path, records) in enumerate(found(data)["tau"]):
        for run in records:
            out.append({**run, "task_id": int(run["task_id"]) + k * TASK_ID_STRIDE} if k else run)
    return out


def describe(data: str | Path) -> str:
    files = found(data)
    return "; ".join(f"{kind}: {', '.join(p.name for p, _ in items) or 'none'}" for kind, items in files.items())
