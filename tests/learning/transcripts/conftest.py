"""Helpers for transcript tests: a JSONL session writer and shards with chosen similarities."""

from __future__ import annotations

import json
import math

import pytest

from learning.transcripts.models import Shard
from learning.transcripts.shards import text_hash

MODEL = "unit-test-8"


class Session:
    """Writes Claude Code records, one JSON object a line, the way the harness does."""

    def __init__(self, sid="s1", day=1, cwd="/home/dev/proj"):
        self.sid, self.day, self.cwd, self.n, self.lines = sid, day, cwd, 0, []

    def _base(self, type_, **extra):
        self.n += 1
        record = {"type": type_, "sessionId": self.sid, "uuid": f"{self.sid}-{self.n}", "cwd": self.cwd,
                  "isSidechain": False, "timestamp": f"2025-05-{self.day:02d}T10:{self.n // 60:02d}:{self.n % 60:02d}Z"}
        record.update(extra)
        self.lines.append(json.dumps(record))
        return self

    def user(self, content, **extra):
        return self._base("user", message={"role": "user", "content": content}, **extra)

    def call(self, tid, name="Bash", **args):
        return self._base("assistant", message={"role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": name, "input": args}]})

    def say(self, text):
        return self._base("assistant", message={"role": "assistant", "content": [{"type": "text", "text": text}]})

    def result(self, tid, text, error=False):
        return self.user([{"type": "tool_result", "tool_use_id": tid, "content": text, "is_error": error}],
                         toolUseResult={"stdout": text})

    def system(self, **extra):
        return self._base("system", **extra)

    def raw(self, line):
        self.lines.append(line)
        return self

    def text(self) -> str:
        return "".join(line + "\n" for line in self.lines)

    def write(self, path):
        path.write_text(self.text())
        return path


def corrected(sid="s1", lesson="tests run with `make test`, never bare pytest.", day=1, tid="t1"):
    """A session in which a person corrects a failed attempt with ``lesson``."""
    s = Session(sid, day)
    s.user("Run the tests please.").call(tid, command="pytest").result(tid, "ModuleNotFoundError: django", error=True)
    return s.user("No, " + lesson)


def vec(similarity: float, axis: int = 1) -> list[float]:
    """A unit vector whose cosine similarity to ``vec(1.0)`` is ``similarity``."""
    v = [0.0] * 8
    v[0] = similarity
    v[axis] = math.sqrt(max(0.0, 1 - similarity * similarity))
    return v


def make(seat, text, session, vector, status=Shard.PENDING, **extra):
    shard = Shard(seat=seat, text=text, text_hash=text_hash(text), session_id=session, status=status, **extra)
    shard.set_vector(vector, MODEL)
    shard.save()
    return shard


@pytest.fixture
def scripted_seat(seat):
    seat.role.llm_auxiliary = ["scripted"]
    seat.role.save()
    return seat
