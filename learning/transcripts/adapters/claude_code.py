"""The Claude Code adapter: session JSONL files (``~/.claude/projects/<project>/<session>.jsonl``).

One JSON record a line. The main thread is walked turn by turn (a turn opens at each thing a
person said, a slash command with typed arguments included). An episode is each failed tool call
that a later working call recovered from (the same tool on the same command or file, or the very
next call of that tool), wherever it sits in the turn, with the turn's request -- its correction is
that call, after what was done to the same target in between (a ``Read`` of the file an ``Edit``
could not match); or a turn whose work a person corrected: the next thing they said is a
correction, or they interrupted and what they said next is about the interrupted work. At most
``MAX_EPISODES_PER_SESSION`` a session.
A malformed line is a warning naming file and line, and a skip; a final line without a newline is
read when it is a whole record.

The watermark (this module's own JSON; opaque to everyone else) records the byte offset to
resume from, a hash of the file's first line (its identity) and of the last consumed line, the
offset up to which observations were counted, and the keys already emitted from the still-open
last turn. The open turn is re-read on the next call, because the next thing the person says may
correct it; nothing already emitted or counted is emitted or counted again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from core.scrub import ScrubStats, scrub
from learning.purposes.offline import lessons
from learning.transcripts.adapters import Episode, ReadResult, SessionSeen
from learning.transcripts.adapters import claude_code_records as rec

WATERMARK_VERSION = 2
MAX_EPISODES_PER_SESSION = 60  # a runaway retry loop cannot flood the store
MAX_STEPS = 12  # the latest steps of a turn an episode shows
MAX_SAID = 300  # characters of an assistant's line kept as a step
MAX_ERROR = 4000  # characters of a failed call's output kept (the informative lines come first)
MAX_OPEN_FAILURES = 20  # failures of a turn still waiting for a recovery
MAX_BETWEEN = 2  # calls on a failed call's target before the one that worked, kept in its episode's correction

_CORRECTION = re.compile(
    r"^\s*(?:no\b|nope|nah\b|don'?t|do not|stop\b|wrong|that'?s (?:not|wrong)|that is (?:not|wrong)|not like that|"
    r"actually\b|instead\b|again\b|as i said|i said|you (?:should|need to|must)|never\b|please (?:don'?t|do not)|"
    r"why did you|that broke|you broke|undo)",
    re.I,
)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


@dataclass
class Watermark:
    v: int = WATERMARK_VERSION
    head: str = ""  # hash of the first line: the file's identity
    offset: int = 0  # where the next read starts (the open turn's first line)
    line: int = 1  # the line number at ``offset``
    tail: str = ""  # hash of the line ending at ``offset``
    tail_len: int = 0
    observed_to: int = 0  # observations and counts cover bytes before this
    emitted: list = field(default_factory=list)  # episode keys already emitted from the open turn
    session: str = ""  # the session the records at ``offset`` belong to (for records without an id)
    per_session: dict = field(default_factory=dict)  # episodes emitted so far, by session

    @classmethod
    def parse(cls, text: str) -> Watermark | None:
        if not text:
            return cls()
        try:
            data = json.loads(text)
            if data.get("v") != WATERMARK_VERSION:
                return None
            return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})
        except (ValueError, TypeError, AttributeError):
            return None

    def dump(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))


@dataclass
class _Call:
    name: str
    summary: str  # "Tool: detail", scrubbed
    detail: str  # the command or target alone, scrubbed
    key: str  # what a retry of the same thing shares: tool and command head, or tool and file


@dataclass
class _Turn:
    ask: str = ""
    ask_id: str = ""
    started_at: datetime | None = None
    ended_at: datetime | None = None
    calls: dict = field(default_factory=dict)  # tool_use_id -> _Call
    steps: list = field(default_factory=list)  # the latest summaries, in order (bounded)
    failures: list = field(default_factory=list)  # (tool_use_id, _Call, error) not recovered yet (bounded)
    last_result_failed: tuple | None = None  # the failure the previous tool result was, for an adjacent retry
    failed_ids: set = field(default_factory=set)  # the calls that failed (a command that failed fixed nothing)
    interrupted: bool = False


_ENV = re.compile(r"^(?:cd\s+\S+\s*&&\s*|[A-Za-z_][A-Za-z0-9_]*=\S*\s+|(?:sudo|time|env|nice|timeout(?:\s+\d+[smh]?)?)\s+)+")


def _call_key(name: str, args: dict) -> str:
    if name == "Bash":
        words = _ENV.sub("", str(args.get("command") or "").lstrip(), count=1).split(None, 2)[:2]
        if len(words) == 2 and not re.match(r"^[a-z][a-z0-9\-]*$", words[1]):
            words = words[:1]  # ``pytest tests/x``: the program alone; ``git push``: program and subcommand
        return "Bash:" + " ".join(words)
    target = args.get("file_path") or args.get("notebook_path") or args.get("path") or ""
    return f"{name}:{target}"


_WORDS = re.compile(r"[a-z][a-z0-9]{3,}")
_COMMON = frozenset(
    "that this with from have what when then there their them they will would could should about into just "
    "also some more make sure please want need like does doesnt dont still work working thanks thank okay "
    "your you yours here were been being than only over again same other".split()
)


def _content_words(text: str) -> set[str]:
    return {w for w in _WORDS.findall(text.lower()) if w not in _COMMON}


def about_the_work(text: str, turn: _Turn) -> bool:
    """Whether what a person said after an interrupt is about the interrupted work (not a new request)."""
    if _CORRECTION.match(text):
        return True
    said = _content_words(text)
    return bool(said & _content_words(" ".join([turn.ask, *turn.steps[-MAX_STEPS:]])))


class _Walker:
    """Consumes one file's records in order and yields episodes and session observations."""

    def __init__(self, source: str, display: str, wm: Watermark):
        self.source, self.display, self.wm = source, display, wm
        self._stats, self._recount = ScrubStats(counts={}), ScrubStats(counts={})
        self.default_session = os.path.splitext(os.path.basename(source))[0]
        self.current_session = wm.session
        self.sessions: dict[str, SessionSeen] = {}
        self.episodes: list[Episode] = []
        self.per_session = dict(wm.per_session)
        self.turn = _Turn()
        self.turn_offset, self.turn_line = wm.offset, wm.line
        self.turn_session = wm.session
        self.open_emitted: list[str] = []
        self.counting = False
        self.records: dict[str, int] = {}  # newly read records by type (a sidechain's marked), for the per-file report

    @property
    def stats(self) -> ScrubStats:
        """Redactions are counted once: lines of the re-read open turn count into a scratch tally."""
        return self._stats if self.counting else self._recount

    @property
    def scrub_counts(self) -> dict:
        return self._stats.counts

    def session(self, record: dict) -> SessionSeen | None:
        """The record's session; a record without an id belongs to the session the file is in (never a new one)."""
        sid = record.get("sessionId")
        if sid:
            self.current_session = sid = str(sid)
        elif self.current_session:
            sid = self.current_session
        elif record.get("type") in ("user", "assistant"):
            sid = self.current_session = self.default_session  # a file whose records carry no id at all
        else:
            return None  # a summary or snapshot before any session record: no session of its own
        seen = self.sessions.get(sid)
        if seen is None:
            seen = self.sessions[sid] = SessionSeen(session_id=sid)
        return seen

    def feed(self, record: dict, offset: int, lineno: int) -> None:
        self.counting = offset >= self.wm.observed_to
        if self.counting:
            kind = f"{record.get('type')}{' (sidechain)' if record.get('isSidechain') else ''}"
            self.records[kind] = self.records.get(kind, 0) + 1
        seen = self.session(record)
        if seen is None:
            return
        kind = str(record.get("type") or "")
        self._stamp(seen, record)
        if kind == "user":
            self._user(record, seen, offset, lineno)
        elif kind == "assistant" and not record.get("isSidechain"):
            self._assistant(record, seen)
        elif kind == "assistant":
            self._observe_calls(record, seen)
        elif kind in ("system", "attachment", "progress") and self.counting:
            for command in rec.hook_commands(record):
                rec.bump(seen.observations, "hooks", scrub(command, self.stats))

    def _stamp(self, seen: SessionSeen, record: dict) -> None:
        when = rec.parse_time(record.get("timestamp"))
        if record.get("cwd") and not seen.cwd:
            seen.cwd = scrub(str(record["cwd"]), self.stats)
        if when is None:
            return
        self.turn.ended_at = when
        if self.counting:
            seen.started_at = when if seen.started_at is None else min(seen.started_at, when)
            seen.ended_at = when if seen.ended_at is None else max(seen.ended_at, when)

    def _user(self, record: dict, seen: SessionSeen, offset: int, lineno: int) -> None:
        kind, text = rec.user_kind(record)
        if kind is None:
            if self.counting and text.startswith("/"):
                rec.bump(seen.observations, "slash_commands", text[1:].split(" ", 1)[0])
            self._person_said(record, seen, scrub(text, self.stats), offset, lineno)
            return
        if self.counting:
            seen.pseudo_user[kind] = seen.pseudo_user.get(kind, 0) + 1
            if kind == rec.LOCAL_COMMAND and rec.slash_command(text):
                rec.bump(seen.observations, "slash_commands", rec.slash_command(text))
        if kind == rec.INTERRUPT:
            self.turn.interrupted = True
        elif kind == rec.TOOL_RESULT:
            self._tool_results(record, seen)

    def _person_said(self, record, seen, text, offset, lineno) -> None:
        if self.counting:
            seen.human_messages += 1
        previous = self.turn
        corrects = previous.ask_id and (previous.steps or previous.interrupted) and (
            about_the_work(text, previous) if previous.interrupted else bool(_CORRECTION.match(text))
        )
        if corrects:
            self._emit(previous, seen.session_id, Episode(
                session_id=seen.session_id,
                key=f"{previous.ask_id}:corrected:{record.get('uuid') or lineno}",
                kind="corrected",
                ask=previous.ask,
                attempt="\n".join(previous.steps),
                failure=self._failure_of(previous),
                correction=text,
                started_at=previous.started_at,
                ended_at=rec.parse_time(record.get("timestamp")) or previous.ended_at,
            ))
        when = rec.parse_time(record.get("timestamp"))
        self.turn = _Turn(ask=text, ask_id=str(record.get("uuid") or f"line{lineno}"), started_at=when, ended_at=when)
        self.turn_offset, self.turn_line, self.turn_session, self.open_emitted = offset, lineno, seen.session_id, []

    @staticmethod
    def _failure_of(turn: _Turn) -> str:
        parts = ["the person interrupted the work"] if turn.interrupted else []
        if turn.failures:
            _tid, call, error = turn.failures[-1]
            parts.append(f"{call.summary} failed: {error}")
        return "\n".join(parts)

    def _step(self, summary: str) -> None:
        steps = self.turn.steps
        steps.append(summary)
        if len(steps) > 2 * MAX_STEPS:
            del steps[:-MAX_STEPS]

    def _assistant(self, record: dict, seen: SessionSeen) -> None:
        for block in rec.blocks(record.get("message")):
            kind = block.get("type")
            if kind == "tool_use":
                name = str(block.get("name") or "")
                args = block.get("input") if isinstance(block.get("input"), dict) else {}
                summary = rec.summarize_call(block, self.stats)
                detail = summary.split(": ", 1)[1] if ": " in summary else ""
                self.turn.calls[str(block.get("id"))] = _Call(name, summary, detail, _call_key(name, args))
                self._step(summary)
                if self.counting:
                    rec.observe_call(block, seen.observations, self.stats)
            elif kind == "text":
                said = rec.first_line(block.get("text") or "")
                if said:
                    self._step(f"said: {scrub(said[:MAX_SAID], self.stats)}")

    def _observe_calls(self, record: dict, seen: SessionSeen) -> None:
        if not self.counting:
            return
        for block in rec.blocks(record.get("message")):
            if block.get("type") == "tool_use":
                rec.observe_call(block, seen.observations, self.stats)

    def _tool_results(self, record: dict, seen: SessionSeen) -> None:
        turn = self.turn
        for block in rec.blocks(record.get("message")):
            if block.get("type") != "tool_result":
                continue
            tid = str(block.get("tool_use_id"))
            call = turn.calls.get(tid)
            if call is None:
                continue
            if block.get("is_error"):
                error = scrub(rec.block_text(block).strip()[:MAX_ERROR], self.stats)
                turn.failures.append((tid, call, error))
                turn.failed_ids.add(tid)
                del turn.failures[:-MAX_OPEN_FAILURES]
                turn.last_result_failed = (tid, call, error)
                continue
            recovered = self._recovered_by(call)
            turn.last_result_failed = None
            if recovered is not None:
                failed_tid, failed, error = recovered
                steps = [c.summary for c in self._between(failed_tid, tid, failed)]
                self._emit(turn, seen.session_id, Episode(
                    session_id=seen.session_id,
                    key=f"{turn.ask_id or 'start'}:self:{failed_tid}",
                    kind="self_corrected",
                    ask=turn.ask,
                    attempt=failed.summary,
                    failure=error,
                    correction="\n".join([*steps, call.summary]),
                    started_at=turn.started_at,
                    ended_at=turn.ended_at,
                ))

    def _recovered_by(self, call: _Call):
        """The failure a working ``call`` recovers from: the latest of the same thing, else the one just before it
        (unless ``call`` is a shell command that only looks, such as ``git status``: that fixed nothing)."""
        turn = self.turn
        for i in range(len(turn.failures) - 1, -1, -1):
            if turn.failures[i][1].key == call.key:
                found = turn.failures[i]
                turn.failures = [f for f in turn.failures if f[1].key != call.key]
                return found
        last = turn.last_result_failed
        if (last is not None and last[1].name == call.name and last in turn.failures
                and not (call.name == "Bash" and lessons.only_reads(call.detail))):
            turn.failures.remove(last)
            return last
        return None

    def _between(self, failed_tid: str, tid: str, failed: _Call) -> list[_Call]:
        """What was done between a failed call and the call that worked, at most ``MAX_BETWEEN``: another tool on
        the failed call's own target (``Read`` of the file an ``Edit`` could not match), or, after a failed shell
        command, the other shell commands that worked (``mix format`` before the commit a hook refused)."""
        calls, out, after = self.turn.calls, [], False
        for key, call in calls.items():
            if key == tid:
                break
            same_target = call.name != failed.name and call.detail and call.detail == failed.detail
            other_command = (failed.name == call.name == "Bash" and call.key != failed.key
                             and key not in self.turn.failed_ids and not lessons.only_reads(call.detail))
            if after and (same_target or other_command):
                out.append(call)
            after = after or key == failed_tid
        return out[-MAX_BETWEEN:]

    def _emit(self, turn: _Turn, session_id: str, episode: Episode) -> None:
        if turn is self.turn:
            self.open_emitted.append(episode.key)
        if episode.key in self.wm.emitted:
            return
        if self.per_session.get(session_id, 0) >= MAX_EPISODES_PER_SESSION:
            return  # a runaway loop cannot flood the store
        self.per_session[session_id] = self.per_session.get(session_id, 0) + 1
        self.episodes.append(episode)


def _whole_record(raw: bytes) -> bool:
    """A last line with no newline is read when it is already a whole JSON object."""
    try:
        return isinstance(json.loads(raw), dict)
    except ValueError:
        return False


class ClaudeCodeAdapter:
    name = "claude-code"
    suffix = ".jsonl"

    def sources(self, path: str) -> list[str]:
        if os.path.isdir(path):
            found: list[str] = []
            for root, _dirs, files in os.walk(path):
                found.extend(os.path.join(root, f) for f in files if f.endswith(self.suffix))
            return sorted(found)
        return [path]

    def read(self, source: str, watermark: str) -> ReadResult:
        display = scrub(source)
        warnings: list[str] = []
        wm = Watermark.parse(watermark)
        restarted = False
        if wm is None:
            warnings.append(f"{display}: unreadable watermark; reading from the start")
            wm, restarted = Watermark(), True
        try:
            fh = open(source, "rb")
        except OSError as exc:
            return ReadResult([], watermark, [f"{display}: cannot be read ({exc.strerror})"])
        with fh:
            checked = self._check_identity(fh, wm, display, warnings)
            restarted = restarted or (checked is not wm and bool(wm.head))
            wm = checked
            walker, end, end_line, last = self._walk(fh, wm, display, warnings)
        new = Watermark(
            head=wm.head or last.get("head", ""),
            offset=walker.turn_offset,
            line=walker.turn_line,
            observed_to=max(end, wm.observed_to),
            emitted=walker.open_emitted,
            session=walker.turn_session or "",
            per_session=walker.per_session,
        )
        if walker.turn_offset > 0:
            new.tail, new.tail_len = last["tails"].get(walker.turn_offset, (wm.tail, wm.tail_len))
        return ReadResult(
            walker.episodes,
            new.dump(),
            warnings,
            sessions=list(walker.sessions.values()),
            bytes_read=max(0, end - max(wm.offset, wm.observed_to)),
            scrubbed=walker.scrub_counts,
            restarted=restarted,
            records=walker.records,
        )

    def _check_identity(self, fh, wm: Watermark, display: str, warnings: list[str]) -> Watermark:
        """Resume only if the first line and the line before the resume point are unchanged."""
        if not wm.head:
            return wm
        first = fh.readline()
        ok = _digest(first.rstrip(b"\r\n")) == wm.head and os.fstat(fh.fileno()).st_size >= wm.observed_to
        if ok and wm.tail_len:
            fh.seek(wm.offset - wm.tail_len)
            ok = _digest(fh.read(wm.tail_len)) == wm.tail
        if not ok:
            warnings.append(f"{display}: changed since the last read (not an append); reading from the start")
            return Watermark()
        return wm

    def _walk(self, fh, wm: Watermark, display: str, warnings: list[str]):
        walker = _Walker(fh.name, display, wm)
        fh.seek(wm.offset)
        offset, lineno = wm.offset, wm.line
        last: dict[str, Any] = {"head": "", "tails": {}}
        previous = b""  # the line before the current one
        turn_tail = None  # the line ending where the open turn starts (the next identity check reads it)
        for raw in fh:
            if not raw.endswith(b"\n") and not _whole_record(raw):
                break  # a line still being written: read it next time
            if offset == 0:
                last["head"] = _digest(raw.rstrip(b"\r\n"))
            opened = walker.turn_offset
            self._line(walker, raw, offset, lineno, display, warnings)
            if walker.turn_offset != opened and walker.turn_offset == offset:
                turn_tail = previous
            previous = raw
            offset += len(raw)
            lineno += 1
        if turn_tail is not None:
            last["tails"][walker.turn_offset] = (_digest(turn_tail), len(turn_tail))
        return walker, offset, lineno, last

    @staticmethod
    def _line(walker: _Walker, raw: bytes, offset: int, lineno: int, display: str, warnings: list[str]) -> None:
        if raw.isspace():
            return
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            if offset >= walker.wm.observed_to:
                warnings.append(f"{display}:{lineno}: malformed line skipped (invalid JSON at column {exc.colno}: {exc.msg.removesuffix(' at')})")
            return
        if not isinstance(record, dict):
            if offset >= walker.wm.observed_to:
                warnings.append(f"{display}:{lineno}: not a JSON object; skipped")
            return
        walker.feed(record, offset, lineno)
