"""Lesson text from an episode, without a model: the rules the offline ``transcript_shards`` answer uses.

A lesson must read alike in every session that hit the same cause, or it can never recur, and it is
installed as written, as a line of CLAUDE.md. So a failed-then-recovered call becomes "`<command
shape>` fails: <the error's informative line>. Fix: <what changed>." with the incident elided --
paths, ids, hashes, quoted names, long numbers and branch names become bare placeholders, never
left inside a quotation -- and the error's noise (``Exit code 1``, stack frames, bare paths,
escape sequences of a serialized output) is skipped. What changed is named: another call instead,
a command run first ("ran `mix format` first"), an argument dropped or added. There is no lesson
when nothing nameable changed (the same call with other arguments), when the failure is an
assertion of the project's own tests or a call the person turned down, or when the command is no
program (a stray ``\\``). A person's correction keeps its own words, sentence by sentence, with
short negative instructions ("don't websearch for this.") kept. Every lesson is bounded
(``MAX_LESSON_CHARS``): a longer sentence is refused, never stored as a blob.

These are plain functions so the purposes that render prompts and parse answers can call them.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence

from core.words import sentences

MIN_LESSON_WORDS = 5
MAX_LESSON_CHARS = 320
MAX_CHANGED_CHARS = 60  # the arguments a fix dropped or added, named in its lesson up to this length
MAX_CAUSE_LINES = 1
MAX_CAUSE_LINE_CHARS = 140
MAX_LESSONS_PER_CORRECTION = 2

# ---- eliding the incident -----------------------------------------------------------------------

_ELISIONS = (
    (re.compile(r"\b[a-z][a-z0-9+.\-]*://\S+", re.I), "<url>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I), "<id>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}\b"), "<hash>"),
    (re.compile(r"\b(?:toolu|msg|req|call|run|task)_[A-Za-z0-9]{6,}\b"), "<id>"),
    # a name after the word for what it names, as one token ("branch feature/x"), never a word it runs into ("doesn't")
    (re.compile(r"(?<![\w-])(branch|tag|remote|commit|container|pod|database|table|column) (?!<)(?!(?:is|has|was|does|did|not|to|of|"
                r"the|a|an|and|or|with|from|for|in|on)\b)[\w./\-]*\w(?![\w'’])"), r"\1 <name>"),
    (re.compile(r"(?:~|\.{1,2})?/?(?:[\w.@\-]+/)+[\w.@\-]*"), "<path>"),
    (re.compile(r"(?<![\w.])[\w\-]+\.(?:py|pyi|js|mjs|cjs|ts|tsx|jsx|json|md|txt|toml|ya?ml|ex|exs|rs|go|rb|java|kt|sh|lock|cfg|ini|html|css|scss|sql|log|env|c|h|cpp|hpp)\b"), "<file>"),
    # a quotation opens and closes outside a word: the apostrophes of "doesn't ... isn't" quote nothing
    (re.compile(r"(?<![\w'])'(?!<\w+>')[^'\n]{1,80}'(?![\w'])"), "<name>"),
    (re.compile(r'(?<![\w"])"(?!<\w+>")[^"\n]{1,80}"(?![\w"])'), "<name>"),
    (re.compile(r"`(?!<\w+>`)[^`\n]{1,80}`"), "<name>"),
    (re.compile(r"\b\d{2,}(?:\.\d+)*\b"), "<n>"),
)
# A quoted name right after a word for a part of a tool's or a program's interface ("The required parameter
# `prompt` is missing", "unexpected keyword argument 'timeout'", "unknown option '--frobnicate'") is that
# interface's own name, the same in every session, and the one word that says how to fix the call: it stays.
_INTERFACE_NAME = re.compile(
    r"\b(?:parameter|argument|option|flag|keyword|property|field)s?:?\s+(['\"`])(-{0,2}[A-Za-z_][\w-]{0,39})\1", re.I)
_KEPT = "\0kept{}\0"


def elide(text: str) -> str:
    """``text`` with incident-specific tokens (paths, ids, hashes, quoted names, numbers) as placeholders; an
    interface's own quoted names (``_INTERFACE_NAME``) are kept."""
    kept: list[str] = []

    def keep(match: re.Match) -> str:
        kept.append(match.group(0))
        return _KEPT.format(len(kept) - 1)

    text = _INTERFACE_NAME.sub(keep, text.replace("\0", ""))
    for pattern, placeholder in _ELISIONS:
        text = pattern.sub(placeholder, text)
    text = _QUOTED_PLACEHOLDER.sub(r"\2", text)  # a quoted path is its bare placeholder: no "'<path>'"
    text = re.sub(r"\0kept(\d+)\0", lambda m: kept[int(m.group(1))], text)
    return re.sub(r"(<path>|<file>)(?:\s+(?:<path>|<file>))+", r"\1s", text)


_QUOTED_PLACEHOLDER = re.compile(r"(['\"`])[^'\"`\n]*?(<(?:name|path|paths|file|files|url|id|hash|n)>)[^'\"`\n]*?\1")
_PLACEHOLDER = re.compile(r"<(?:name|path|paths|file|files|url|id|hash|n|args)>")


def unescaped(text: str) -> str:
    """A serialized output as the text it holds: a line that is a JSON object gives its strings, one a line, and
    escape sequences stand for what they mean (a literal ``\\n`` is a line break)."""
    lines = []
    for line in re.sub(r"^\s*error:\s*", "", text or "", flags=re.I).splitlines():
        if line.lstrip()[:1] in ("{", "["):
            try:
                lines.extend(_strings(json.loads(line)))
                continue
            except ValueError:
                pass
        lines.append(line)
    text = re.sub(r"\\r\\n|\\n|\\r", "\n", "\n".join(lines))
    return re.sub(r"\\([\"'\\])", r"\1", text.replace("\\t", " "))


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [s for item in items for s in _strings(item)]


def says_something(line: str) -> bool:
    """An elided line says something when it has more words than placeholders and no escaped fragment left."""
    if "\\" in line:
        return False
    placeholders = len(_PLACEHOLDER.findall(line))
    return len(re.findall(r"[A-Za-z]{3,}", _PLACEHOLDER.sub(" ", line))) > placeholders


# ---- the informative lines of an error ----------------------------------------------------------

_NOISE = re.compile(
    r"^(?:exit code \d+|traceback \(most recent call last\):|file \".*\", line \d+.*|at \S+ \(.*\)|at .+:\d+:\d+\)?|"
    r"\^+|~+|-+|=+|\.\.\.|\[\d+/\d+\].*|\s*\d+\s*\|.*|</?tool_use_error>|<error>|</error>|\(node:\d+\).*)$",
    re.I,
)
_SIGNAL = re.compile(
    r"\b(?:error|errors|fatal|fail(?:ed|s|ure)?|denied|not found|no such|cannot|can't|could not|couldn't|unable|refused|"
    r"invalid|ignored|rejected|missing|exception|not allowed|forbidden|no upstream|conflict|unknown|unrecognized|"
    r"undefined|expected|timed? ?out|usage|permission|does not|doesn't|is not|isn't|already|must|requires?)\b",
    re.I,
)
_TAGS = re.compile(r"</?(?:tool_use_error|error|stderr|stdout)>")


def informative_lines(error: str, limit: int = MAX_CAUSE_LINES) -> list[str]:
    """The elided lines of an error that say what went wrong: noise, bare paths and lines of little but
    placeholders skipped, signal lines first."""
    lines = []
    for raw in _TAGS.sub("\n", unescaped(error or "")).splitlines():
        line = re.sub(r"^(?:E\s{2,}|\[[^\]\n]{1,20}\]\s*)", "", raw.strip())  # pytest's marker, a "[FORMAT]" tag
        if not line or _NOISE.match(line) or not re.search(r"[A-Za-z]{3}", line):
            continue
        shown = elide(line)
        if shown.strip(" .:;,") in ("<path>", "<paths>", "<file>", "<files>", "<url>", "<id>", "<hash>") or not says_something(shown):
            continue
        lines.append((line, shown))
    flagged = [bool(_SIGNAL.search(line)) for line, _shown in lines]
    # a signal line that ends with a colon announces the next one ("... failed due to the following issue:"), which
    # says more when it is a signal line too
    signal = [lines[i + 1] if line.rstrip().endswith(":") and i + 1 < len(lines) and flagged[i + 1] else (line, shown)
              for i, (line, shown) in enumerate(lines) if flagged[i]]
    out = []
    for _line, shown in signal[:limit] if signal else lines[-1:]:
        if len(shown) > MAX_CAUSE_LINE_CHARS:
            shown = shown[:MAX_CAUSE_LINE_CHARS].rsplit(" ", 1)[0] + "…"
        if shown not in out:
            out.append(shown)
    return out


# ---- the shape of a command ---------------------------------------------------------------------

_SUBCOMMAND = re.compile(r"^[a-z][a-z0-9\-]*(?::[a-z0-9\-]+)?$")
# a subcommand that runs another program or a named script (``uv run pytest``, ``poetry run mypy``, ``bundle exec
# rspec``, ``npm run lint``): the word after it is what ran, kept -- a path or a file after it is still elided
_RUNS_NEXT = frozenset({"run", "exec", "x"})
_PREFIX = re.compile(r"^(?:sudo|time|env|nice|timeout|command|exec|npx|uvx|bunx)$")
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _tokens(segment: str) -> list[str]:
    try:
        return shlex.split(segment, posix=True)
    except ValueError:
        return segment.split()


def command_shape(command: str) -> str:
    """A shell command as its program, subcommand and flags, its arguments elided: ``git add <args>``; what a
    runner runs is kept (``uv run pytest <args> -q``)."""
    first = next((line.strip() for line in (command or "").splitlines() if line.strip()), "")
    shapes = []
    for segment in re.split(r"\s*(?:&&|\|\||;|\|)\s*", first):
        words = [w for w in _tokens(segment) if not _ASSIGN.match(w)]
        while words and (_PREFIX.match(words[0]) or re.fullmatch(r"\d+[smh]?", words[0])):
            words = words[1:]
        if not words or words[0] in ("cd", "source", "."):
            continue
        if not re.search(r"[A-Za-z]", words[0]):  # "\\", "]": a stray character is no program
            return ""
        shape = [words[0].rsplit("/", 1)[-1]]
        rest = words[1:]
        if len(rest) > 1 and rest[0] == "-m" and shape[0].startswith("python"):
            shape.append(f"-m {rest[1]}")
            rest = rest[2:]
        if rest and _SUBCOMMAND.match(rest[0]):
            shape.append(rest.pop(0))
            if shape[-1] in _RUNS_NEXT and rest and _SUBCOMMAND.match(rest[0]):
                shape.append(rest.pop(0))
        for word in rest:
            if word.startswith("-"):
                flag = word.split("=", 1)[0]
                if flag not in shape:
                    shape.append(flag)
            elif shape[-1] != "<args>":
                shape.append("<args>")
            if len(shape) >= 6:
                break
        shapes.append(" ".join(shape))
        if len(shapes) == 2:
            break
    return " && ".join(shapes)


def call_shape(tool: str, detail: str) -> str:
    """What a tool call was, generally: a shell command's shape ('' for one that is no program), another tool's
    name and target kind."""
    if tool == "Bash":
        return command_shape(detail)
    if not detail:
        return tool
    return f"{tool} {elide(detail.splitlines()[0])[:60]}"


# ---- lessons ------------------------------------------------------------------------------------


def bounded(lesson: str) -> str:
    """The lesson, or '' when it is too long to be one lesson (refused, never stored as a blob)."""
    lesson = " ".join((lesson or "").split())
    return lesson if len(lesson) <= MAX_LESSON_CHARS else ""


# a failed call's lesson as ``failure_lesson`` words it: what the call was, what it said, what worked
FAILURE_LESSON = re.compile(r"^`[^`]+` fails: .+ Fix: .+", re.S)


# an assertion of the project's own tests failing: the code under test was wrong, no tool was misused
ASSERTION = re.compile(r"\bassert(?:ion)?(?:error)?\b", re.I)
# the harness's word for a call the person turned down: their correction follows, no tool was misused
TURNED_DOWN = re.compile(r"\b(?:doesn't|does not) want to proceed with this tool use\b|\btool use was rejected\b", re.I)
# what only reads changes nothing, so it is no part of a fix ("ran `git status` first")
READS = re.compile(r"^(?:ls|cat|head|tail|less|grep|rg|find|pwd|echo|which|wc|tree|stat|file|env|"
                    r"git (?:status|diff|log|show|branch|remote))\b")


def only_reads(command: str) -> bool:
    """Whether a shell command only looks (``git status``, ``ls``): it changes nothing, so it fixes nothing."""
    return bool(READS.match(" ".join((command or "").split())))


def failure_lesson(*, tool: str, attempt: str, error: str, fix: str, first: Sequence[tuple[str, str]] = ()) -> str:
    """Cause and fix of a failed call recovered by a later one, in words two sessions would share; '' when there is
    no lesson (no nameable fix, a test's assertion, a command that is no program). ``first``: the calls made
    between the failure and the call that worked (``[("Read", path)]``, ``[("Bash", "mix format")]``)."""
    failed, worked = call_shape(tool, attempt), call_shape(tool, fix)
    said = unescaped(error or "")
    if not failed or not worked or ASSERTION.search(said) or TURNED_DOWN.search(said):
        return ""
    cause = informative_lines(error)
    fix_text = _fix_text(tool, attempt, fix, failed, worked, first)
    if not cause or not fix_text:
        return ""
    return bounded(f"`{failed}` fails: {cause[0].rstrip('.:;, ')}. Fix: {fix_text}.")


def _fix_text(tool: str, attempt: str, fix: str, failed: str, worked: str, first) -> str:
    """What made the call work: another call instead, a call made first, an argument dropped or added; '' when
    the arguments changed in a way no rule names."""
    if worked != failed:
        return f"`{worked}` worked instead"
    done = [(t, d) for t, d in first if not (t == "Bash" and only_reads(d))]
    if done:
        ran = " then ".join(f"`{call_shape(t, d) if t != 'Bash' else _plain_command(d)}`" for t, d in done)
        return f"ran {ran} first, then the same {'command' if tool == 'Bash' else 'call'} worked"
    if tool == "Bash":
        dropped, added = _changed_words(attempt, fix)
        if len(dropped) > MAX_CHANGED_CHARS or len(added) > MAX_CHANGED_CHARS:  # a message, not an argument
            dropped = added = ""
        if dropped and not added:
            return f"the same command without `{dropped}` worked"
        if added and not dropped:
            return f"the same command with `{added}` added worked"
    return ""


def _plain_command(command: str) -> str:
    """A command run as a fix, as written when it is short and names no incident (``mix format``), else its shape."""
    line = " ".join(command.split())
    return line if len(line) <= MAX_CHANGED_CHARS and elide(line) == line else command_shape(command)


def _changed_words(attempt: str, fix: str) -> tuple[str, str]:
    """The words of a shell command the fix left out and those it added, each elided (``<path>``)."""
    before, after = attempt.split(), fix.split()
    dropped = [w for w in before if w not in after]
    added = [w for w in after if w not in before]
    return elide(" ".join(dropped)), elide(" ".join(added))


_LEAD = re.compile(
    r"^\s*(?:(?:(?:no|nope|nah|wrong|stop|undo|ok|okay|hmm|well)\s*[,.:;!\-—–]+|(?:actually|again|as i said|i said|please|instead)\b[\s,.:;!\-—–]*)\s*)+",
    re.I,
)
_NEGATIVE = re.compile(r"^(?:don'?t|do not|never|stop|avoid|no more|not)\b", re.I)


def is_negative_instruction(sentence: str) -> bool:
    return bool(_NEGATIVE.match(sentence.strip()))


def correction_lessons(text: str) -> list[str]:
    """A person's correction as standalone statements: remarks dropped, negative instructions kept, each bounded."""
    out = []
    for sentence in sentences(text):
        sentence = _LEAD.sub("", sentence).strip(" -*>#\t")
        if not sentence or sentence.endswith("?"):
            continue
        words = len(sentence.split())
        if words < MIN_LESSON_WORDS and not (is_negative_instruction(sentence) and words >= 2):
            continue  # "That's not enough.", "Stop." : a remark, not the lesson
        sentence = sentence[0].upper() + sentence[1:]
        sentence = bounded(sentence if sentence[-1] in ".!" else sentence + ".")
        if sentence and sentence not in out:
            out.append(sentence)
        if len(out) == MAX_LESSONS_PER_CORRECTION:
            break
    return out


def declarative(text: str) -> str:
    """The first lesson of a correction ('' when there is none)."""
    lessons = correction_lessons(text)
    return lessons[0] if lessons else ""
