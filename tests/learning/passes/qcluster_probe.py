"""A pass for the process tests: it claims a duty, records when it ran, and holds it a while."""

from __future__ import annotations

import json
import os
import time
from datetime import timedelta


def _append(path: str, record: dict) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")


def probe(log_path: str, hold_seconds: float = 1.0) -> dict:
    from learning.passes import duties

    def body():
        start = time.time()
        time.sleep(hold_seconds)
        _append(log_path, {"pid": os.getpid(), "start": start, "end": time.time(), "ran": True})
        return {"held": hold_seconds}

    result = duties.run_singleton("test.probe", body, lease=timedelta(seconds=60))
    if not result["ran"]:
        _append(log_path, {"pid": os.getpid(), "at": time.time(), "ran": False})
    return result


def mark(log_path: str) -> str:
    _append(log_path, {"pid": os.getpid(), "at": time.time(), "broker": os.environ.get("CREWLET_Q_REDIS", "orm")})
    return "marked"
