"""The Claude Code adapter: session JSONL files (``~/.claude/projects/<project>/<session>.jsonl``).

One JSON record a line. The main thread is walked turn by turn (a turn opens at each thing a
person said); an episode is a turn whose work a person corrected (the next thing they said is a
correction, or they interrupted), or a turn in which a failed tool call was followed by a
working call of the same tool. A malformed line is a warning naming file and line, and a skip.

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

from learning.transcripts.adapters import Episode, ReadResult, SessionSeen
from learning.transcripts.adapters import claude_code_records as rec
from learning.transcripts.scrub import ScrubStats, scrub

WATERMARK_VERSION = 1

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
class _Turn:
    ask: str = ""
    ask_id: str = ""
    started_at: object = None
    ended_at: object = None
    calls: dict = field(default_factory=dict)  # tool_use_id -> (name, summary)
    steps: list = field(default_factory=list)  # summaries in order
    failed: tuple | None = None  # (tool_use_id, name, summary, error text)
    interrupted: bool = False
    self_corrected: bool = False


class _Walker:
    """Consumes one file's records in order and yields episodes and session observations."""

    def __init__(self, source: str, display: str, wm: Watermark):
        self.source, self.display, self.wm = source, display, wm
        self._stats, self._recount = ScrubStats(counts={}), ScrubStats(counts={})
        self.default_session = os.path.splitext(os.path.basename(source))[0]
        self.sessions: dict[str, SessionSeen] = {}
        self.episodes: list[Episode] = []
        self.turn = _Turn()
        self.turn_offset, self.turn_line = wm.offset, wm.line
        self.open_emitted: list[str] = []
        self.counting = False

    @property
    def stats(self) -> ScrubStats:
        """Redactions are counted once: lines of the re-read open turn count into a scratch tally."""
        return self._stats if self.counting else self._recount

    @property
    def scrub_counts(self) -> dict:
        return self._stats.counts

    def session(self, record: dict) -> SessionSeen:
        sid = str(record.get("sessionId") or self.default_session)
        seen = self.sessions.get(sid)
        if seen is None:
            seen = self.sessions[sid] = SessionSeen(session_id=sid)
        return seen

    def feed(self, record: dict, offset: int, lineno: int) -> None:
        self.counting = offset >= self.wm.observed_to
        kind = record.get("type")
        seen = self.session(record)
        self._stamp(seen, record)
        if kind == "user":
            self._user(record, seen, offset, lineno)
        elif kind == "assistant" and not record.get("isSidechain"):
            self._assistant(record, seen)
        elif kind == "assistant":
            self._observe_calls(record, seen)
        elif kind in ("system", "attachment") and self.counting:
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
            self._person_said(record, seen, scrub(text, self.stats), offset, lineno)
            return
        if self.counting:
            seen.pseudo_user[kind] = seen.pseudo_user.get(kind, 0) + 1
            if kind == rec.LOCAL_COMMAND and rec.slash_command(text):
                rec.bump(seen.observations, "slash_commands", rec.slash_command(text))
        if kind == rec.INTERRUPT:
            self.turn.interrupted = True
        elif kind == rec.TOOL_RESULT:
            self._tool_results(record)

    def _person_said(self, record, seen, text, offset, lineno) -> None:
        if self.counting:
            seen.human_messages += 1
        previous = self.turn
        if previous.ask_id and (previous.interrupted or _CORRECTION.match(text)) and (previous.steps or previous.interrupted):
            self._emit(previous, Episode(
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
        self.turn_offset, self.turn_line, self.open_emitted = offset, lineno, []

    @staticmethod
    def _failure_of(turn: _Turn) -> str:
        parts = ["the person interrupted the work"] if turn.interrupted else []
        if turn.failed:
            parts.append(f"{turn.failed[2]} failed: {turn.failed[3]}")
        return "\n".join(parts)

    def _assistant(self, record: dict, seen: SessionSeen) -> None:
        for block in rec.blocks(record.get("message")):
            if block.get("type") == "tool_use":
                summary = rec.summarize_call(block, self.stats)
                self.turn.calls[str(block.get("id"))] = (str(block.get("name") or ""), summary)
                self.turn.steps.append(summary)
                if self.counting:
                    rec.observe_call(block, seen.observations, self.stats)
            elif block.get("type") == "text" and block.get("text", "").strip():
                self.turn.steps.append(f"said: {rec.first_line(scrub(block['text'], self.stats))}")

    def _observe_calls(self, record: dict, seen: SessionSeen) -> None:
        if not self.counting:
            return
        for block in rec.blocks(record.get("message")):
            if block.get("type") == "tool_use":
                rec.observe_call(block, seen.observations, self.stats)

    def _tool_results(self, record: dict) -> None:
        turn = self.turn
        for block in rec.blocks(record.get("message")):
            if block.get("type") != "tool_result":
                continue
            call = turn.calls.get(str(block.get("tool_use_id")))
            if call is None:
                continue
            if block.get("is_error"):
                if turn.failed is None:
                    turn.failed = (str(block.get("tool_use_id")), call[0], call[1], scrub(rec.block_text(block).strip(), self.stats))
            elif turn.failed and call[0] == turn.failed[1] and not turn.self_corrected:
                turn.self_corrected = True
                self._emit(turn, Episode(
                    session_id=self.session(record).session_id,
                    key=f"{turn.ask_id or 'start'}:self:{turn.failed[0]}",
                    kind="self_corrected",
                    ask=turn.ask,
                    attempt=turn.failed[2],
                    failure=turn.failed[3],
                    correction=call[1],
                    started_at=turn.started_at,
                    ended_at=turn.ended_at,
                ))

    def _emit(self, turn: _Turn, episode: Episode) -> None:
        if turn is self.turn:
            self.open_emitted.append(episode.key)
            if episode.key in self.wm.emitted:
                return
        elif episode.key in self.wm.emitted:
            return
        self.episodes.append(episode)


class ClaudeCodeAdapter:
    name = "claude-code"
    suffix = ".jsonl"

    def sources(self, path: str) -> list[str]:
        if os.path.isdir(path):
            found = []
            for root, _dirs, files in os.walk(path):
                found.extend(os.path.join(root, f) for f in files if f.endswith(self.suffix))
            return sorted(found)
        return [path]

    def read(self, source: str, watermark: str) -> ReadResult:
        display = scrub(source)
        warnings: list[str] = []
        wm = Watermark.parse(watermark)
        if wm is None:
            warnings.append(f"{display}: unreadable watermark; reading from the start")
            wm = Watermark()
        try:
            fh = open(source, "rb")
        except OSError as exc:
            return ReadResult([], watermark, [f"{display}: cannot be read ({exc.strerror})"])
        with fh:
            wm = self._check_identity(fh, wm, display, warnings)
            walker, end, end_line, last = self._walk(fh, wm, display, warnings)
        new = Watermark(
            head=wm.head or last.get("head", ""),
            offset=walker.turn_offset,
            line=walker.turn_line,
            observed_to=max(end, wm.observed_to),
            emitted=walker.open_emitted,
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
        )

    def _check_identity(self, fh, wm: Watermark, display: str, warnings: list[str]) -> Watermark:
        """Resume only if the first line and the line before the resume point are unchanged."""
        if not wm.head:
            return wm
        first = fh.readline()
        ok = _digest(first) == wm.head and os.fstat(fh.fileno()).st_size >= wm.observed_to
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
        last = {"head": "", "tails": {}}
        for raw in fh:
            if not raw.endswith(b"\n"):
                break  # a line still being written: read it next time
            if offset == 0:
                last["head"] = _digest(raw)
            self._line(walker, raw, offset, lineno, display, warnings)
            offset += len(raw)
            lineno += 1
            # only the line ending where the open turn starts is ever needed for the next identity check
            tails = last["tails"]
            tails[offset] = (_digest(raw), len(raw))
            if len(tails) > 2:
                last["tails"] = {k: v for k, v in tails.items() if k in (walker.turn_offset, offset)}
        return walker, offset, lineno, last

    @staticmethod
    def _line(walker: _Walker, raw: bytes, offset: int, lineno: int, display: str, warnings: list[str]) -> None:
        if not raw.strip():
            return
        try:
            record = json.loads(raw)
        except ValueError as exc:
            if offset >= walker.wm.observed_to:
                warnings.append(f"{display}:{lineno}: malformed line skipped (invalid JSON at column {exc.colno}: {exc.msg.removesuffix(' at')})")
            return
        if not isinstance(record, dict):
            if offset >= walker.wm.observed_to:
                warnings.append(f"{display}:{lineno}: not a JSON object; skipped")
            return
        walker.feed(record, offset, lineno)
