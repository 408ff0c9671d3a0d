"""Realistic Claude Code 2.x session files, generated (no real person's data).

What real 2.x sessions look like, and this writes: a human turn spans hundreds of tool calls
(Read, Grep, Edit, Bash) with long outputs; several calls fail and are recovered from in the same
turn; the harness writes ``<task-notification>`` user records when a background command ends,
hook progress and stop-hook summaries, file-history snapshots and queue operations; a person's
slash command with arguments is written as a caveat, the command record and the expanded skill
text (``isMeta``); a person interrupts, then either corrects the interrupted work or asks for
something new; a compaction writes an ``isCompactSummary`` record and an ``agent-acompact-*``
file; a ``Task`` call writes ``agent_progress`` records and ``<session>/subagents/agent-*.jsonl``.
The project folder is named from the absolute path (``-home-jdoe-projects-shop``).

The same causes recur across sessions with different paths and branch names (a ``git add`` of a
git-ignored path, a ``git push`` with no upstream branch, an ``Edit`` whose text is not in the
file, ``pytest`` outside the project's environment), so the ladder has something real to accept.
With ``traps``, each turn also holds failures that teach nothing a lead would install, and one that
does in a form that is hard to word: a commit refused by a formatting hook whose output is
serialized JSON with escaped line breaks (fixed by running the formatter first), a test's own
assertion failing, a stray ``\\`` typed as a command, and a tool call retried with a missing
parameter filled in.

``write_corpus(folder, mb=..., seed=...)`` writes sessions until about ``mb`` megabytes; each
file is a whole session. ``write_session`` writes one.
"""

from __future__ import annotations

import json
import random
import uuid
from datetime import datetime, timedelta
from pathlib import Path

USER = "jdoe"
PROJECT = f"/home/{USER}/projects/shop"
FOLDER = "-home-jdoe-projects-shop"
VERSION = "2.1.38"

MODULES = ["orders", "billing", "catalog", "accounts", "shipping", "search", "carts", "reviews"]
BRANCHES = ["feature/checkout-v2", "fix-tax-rounding", "jd/search-facets", "refactor-carts", "main-hotfix-7"]
IGNORED = ["var/cache/index.db", "tmp/profile.out", "node_modules/.cache/x.json", "coverage/lcov.info", "dist/app.js"]
REQUESTS = [
    "Add pagination to the {m} list endpoint and cover it with tests.",
    "The {m} admin page is slow, find out why and fix it.",
    "Rename the {m} service's `fetch_all` to `list_all` everywhere.",
    "Write a migration that adds an index on {m}.created_at.",
]
SLASH = [("/orchestrator", "split the {m} refactor into parallel subtasks"), ("/review-pr", "check the {m} branch before I merge")]


class _Writer:
    def __init__(self, sid: str, rng: random.Random, start: datetime, cwd: str = PROJECT, sidechain: bool = False, agent_id: str = ""):
        self.sid, self.rng, self.now, self.cwd, self.sidechain, self.agent_id = sid, rng, start, cwd, sidechain, agent_id
        self.people: set[str] = set()  # uuids of the records a person wrote (the ground truth tests label with)
        self.lines: list[str] = []
        self.parent: str | None = None
        self.size = 0

    def _tick(self) -> str:
        self.now += timedelta(seconds=self.rng.randint(1, 20))
        return self.now.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def add(self, record: dict, chained: bool = True) -> str:
        uid = str(uuid.UUID(int=self.rng.getrandbits(128)))
        base = {"parentUuid": self.parent, "isSidechain": self.sidechain, "userType": "external", "cwd": self.cwd,
                "sessionId": self.sid, "version": VERSION, "gitBranch": "main"}
        if self.agent_id:
            base["agentId"] = self.agent_id
        base.update(record)
        base.setdefault("uuid", uid)
        base["timestamp"] = self._tick()
        line = json.dumps(base, ensure_ascii=False)
        self.lines.append(line)
        self.size += len(line) + 1
        if chained:
            self.parent = base["uuid"]
        return base["uuid"]

    def bare(self, record: dict) -> None:
        line = json.dumps(record)
        self.lines.append(line)
        self.size += len(line) + 1

    def person(self, text, *, wrote: bool = False, **extra) -> str:
        """A ``type: user`` record; ``wrote`` marks one a person wrote (the others are the harness's)."""
        uid = self.add({"type": "user", "message": {"role": "user", "content": text}, **extra})
        if wrote and not self.sidechain:
            self.people.add(uid)
        return uid

    def call(self, name: str, args: dict, text: str = "") -> str:
        tid = "toolu_01" + "".join(self.rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789") for _ in range(22))
        content = ([{"type": "text", "text": text}] if text else []) + [{"type": "tool_use", "id": tid, "name": name, "input": args}]
        self.add({"type": "assistant", "requestId": f"req_{self.rng.getrandbits(64):016x}", "message": {
            "model": "claude-opus-4-6", "id": f"msg_{self.rng.getrandbits(64):016x}", "type": "message", "role": "assistant",
            "content": content, "stop_reason": None, "usage": {"input_tokens": self.rng.randint(3, 900), "output_tokens": self.rng.randint(20, 900)}}})
        return tid

    def result(self, tid: str, output: str, error: bool = False) -> None:
        block = {"tool_use_id": tid, "type": "tool_result", "content": output}
        if error:
            block["is_error"] = True
        self.add({"type": "user", "message": {"role": "user", "content": [block]},
                  "toolUseResult": f"Error: {output}" if error else {"stdout": output, "stderr": "", "interrupted": False}})

    def say(self, text: str) -> None:
        self.add({"type": "assistant", "message": {"model": "claude-opus-4-6", "id": f"msg_{self.rng.getrandbits(64):016x}",
                  "type": "message", "role": "assistant", "content": [{"type": "text", "text": text}]}})

    def hook(self, event: str, command: str) -> None:
        self.add({"type": "progress", "data": {"type": "hook_progress", "hookEvent": event, "hookName": f"{event}:Bash", "command": command},
                  "toolUseID": f"toolu_hook{self.rng.getrandbits(32):08x}"}, chained=False)

    def text(self) -> str:
        return "".join(line + "\n" for line in self.lines)


def _code(rng: random.Random, module: str, lines: int) -> str:
    body = []
    for n in range(1, lines + 1):
        body.append(f"{n:>6}\t    {rng.choice(['def', 'return', 'if', 'for', 'self.', 'await'])} {module}_{rng.randrange(999)}(request, pk={rng.randrange(99)})")
    return "\n".join(body)


def _routine(w: _Writer, rng: random.Random, module: str, n: int) -> None:
    """``n`` ordinary calls that work: reads, searches, edits, test runs with long output."""
    for _ in range(n):
        pick = rng.random()
        path = f"{PROJECT}/{module}/{rng.choice(['views', 'models', 'serializers', 'tests/test_api'])}.py"
        if pick < 0.35:
            w.result(w.call("Read", {"file_path": path}), _code(rng, module, rng.randint(40, 160)))
        elif pick < 0.55:
            w.result(w.call("Grep", {"pattern": f"{module}_list", "path": PROJECT}), "\n".join(f"{PROJECT}/{module}/f{i}.py:{rng.randrange(400)}: {module}_list" for i in range(rng.randint(2, 30))))
        elif pick < 0.75:
            tid = w.call("Edit", {"file_path": path, "old_string": f"def {module}_list(", "new_string": f"def {module}_list_all("})
            w.result(tid, f"The file {path} has been updated. Here's the result of running `cat -n` on a snippet:\n" + _code(rng, module, 12))
        else:
            cmd = rng.choice(["uv run pytest -q", "uv run ruff check .", "git status --short", "git diff --stat"])
            w.result(w.call("Bash", {"command": cmd, "description": "check"}), "\n".join(f"{module}/tests/test_{i}.py ....." for i in range(rng.randint(5, 60))) + "\n42 passed in 3.1s")


def _failure_arcs(w: _Writer, rng: random.Random, module: str, branch: str, which: list[str]) -> None:
    for arc in which:
        if arc == "gitignored":
            ignored = rng.choice(IGNORED)
            tid = w.call("Bash", {"command": f"git add {module}/views.py {module}/tests/test_api.py {ignored}", "description": "Stage changes"})
            w.result(tid, "Exit code 1\nThe following paths are ignored by one of your .gitignore files:\n"
                     f"{ignored}\nhint: Use -f if you really want to add them.\nhint: Turn this message off by running\n"
                     'hint: "git config advice.addIgnoredFile false"', error=True)
            w.say("That path is ignored; staging only the source files.")
            w.result(w.call("Bash", {"command": f"git add {module}/views.py {module}/tests/test_api.py"}), "")
        elif arc == "upstream":
            tid = w.call("Bash", {"command": "git push", "description": "Push the branch"})
            w.result(tid, f"Exit code 128\nfatal: The current branch {branch} has no upstream branch.\nTo push the current branch and set the remote as upstream, use\n\n"
                     f"    git push --set-upstream origin {branch}\n\nTo have this happen automatically for branches without a tracking\n"
                     "upstream, see 'push.autoSetupRemote' in 'git help config'.\n", error=True)
            w.result(w.call("Bash", {"command": f"git push --set-upstream origin {branch}"}),
                     f"branch '{branch}' set up to track 'origin/{branch}'.\nTo github.com:acme/shop.git\n * [new branch]      {branch} -> {branch}")
        elif arc == "edit":
            path = f"{PROJECT}/{module}/serializers.py"
            tid = w.call("Edit", {"file_path": path, "old_string": "class Meta:\n    fields = '__all__'", "new_string": "class Meta:\n    fields = ['id']"})
            w.result(tid, "<tool_use_error>String to replace not found in file.\nString: class Meta:\n    fields = '__all__'</tool_use_error>", error=True)
            w.result(w.call("Read", {"file_path": path}), _code(rng, module, 30))
            w.result(w.call("Edit", {"file_path": path, "old_string": "class Meta:\n        fields = '__all__'", "new_string": "class Meta:\n        fields = ['id']"}), f"The file {path} has been updated.")
        elif arc == "pytest":
            tid = w.call("Bash", {"command": f"pytest {module}/tests -q"})
            w.result(tid, f"Exit code 2\nImportError while loading conftest '{PROJECT}/conftest.py'.\nconftest.py:3: in <module>\n    import django\n"
                     "E   ModuleNotFoundError: No module named 'django'", error=True)
            w.result(w.call("Bash", {"command": f"uv run pytest {module}/tests -q"}), "........ 8 passed in 2.2s")


def _traps(w: _Writer, module: str) -> None:
    """The failures of ``write_session(traps=True)``: one lesson worded from an awkward output, three non-lessons."""
    commit = f'git add {module}/views.py && git commit -m "Tidy the {module} views"'
    hook = json.dumps({"hook_id": "format", "output": f"format check failed:\n\n[format] 2 files would be reformatted: "
                       f"{module}/views.py, {module}/models.py\nRun 'ruff format' to fix.\n"})
    w.result(w.call("Bash", {"command": commit}), f"Exit code 1\n{hook}", error=True)
    w.result(w.call("Bash", {"command": "git status --short"}), f" M {module}/views.py")
    w.result(w.call("Bash", {"command": "ruff format"}), "2 files reformatted")
    w.result(w.call("Bash", {"command": commit}), "[main 4be1f2a] Tidy the views\n 1 file changed")
    test = f"uv run pytest {module}/tests/test_api.py -q"
    w.result(w.call("Bash", {"command": test}), "Exit code 1\n>       assert response.status_code == 200\n"
             'E       AssertionError: assert 404 == 200\nE        +  where 404 = <Response "not found">.status_code\n'
             f"FAILED {module}/tests/test_api.py::test_list - AssertionError", error=True)
    w.result(w.call("Edit", {"file_path": f"{PROJECT}/{module}/urls.py", "old_string": "list/", "new_string": "list"}), "updated")
    w.result(w.call("Bash", {"command": test}), "1 passed")
    w.result(w.call("Bash", {"command": "\\"}), "(eval):1: permission denied: \\", error=True)
    w.result(w.call("Bash", {"command": "ls"}), "README.md")
    w.result(w.call("Task", {"description": "Survey", "subagent_type": "Explore"}),
             "<tool_use_error>InputValidationError: Task failed due to the following issue:\n"
             "The required parameter `prompt` is missing</tool_use_error>", error=True)
    w.result(w.call("Task", {"description": "Survey", "prompt": f"List the callers of {module}_list", "subagent_type": "Explore"}),
             "Found 3 callers.")


def write_session(folder: Path, rng: random.Random, *, index: int, turns: int = 3, calls_per_turn: int = 200, secret: bool = False,
                  people: set | None = None, traps: bool = False) -> list[Path]:
    """One session file (and its subagent and compaction files); returns the paths written.

    ``people``, when given, receives the uuids of the records a person wrote (the ground truth); ``traps`` adds
    ``_traps`` to every turn.
    """
    sid = str(uuid.UUID(int=rng.getrandbits(128)))
    start = datetime(2026, 2, 1) + timedelta(days=index, hours=rng.randint(8, 18))
    start = start.replace(tzinfo=__import__("datetime").timezone.utc)
    w = _Writer(sid, rng, start)
    w.bare({"type": "file-history-snapshot", "messageId": str(uuid.UUID(int=rng.getrandbits(128))), "snapshot": {"trackedFileBackups": {}}, "isSnapshotUpdate": False})
    w.hook("SessionStart", f"/home/{USER}/.claude/hooks/session-start.sh")
    written = []
    module, branch = rng.choice(MODULES), rng.choice(BRANCHES)
    arcs = ["gitignored", "upstream", "edit", "pytest"]
    for turn in range(turns):
        module = rng.choice(MODULES)
        if turn == 0 and index % 2 == 0:
            name, args = rng.choice(SLASH)
            w.person("<local-command-caveat>Caveat: The messages below were generated by the user while running local commands. "
                     "DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.</local-command-caveat>", isMeta=True)
            w.person(f"<command-message>{name[1:]} is running…</command-message>\n<command-name>{name}</command-name>\n<command-args>{args.format(m=module)}</command-args>", wrote=True)
            w.person([{"type": "text", "text": "Split complex tasks into independent subtasks and execute them in parallel.\n\n## Process\n\n1. Analyze and plan."}], isMeta=True)
        else:
            ask = rng.choice(REQUESTS).format(m=module)
            if secret and turn == 1:
                ask += (" The staging key is sk_live_" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(24))
                        + f" and my mail is {USER}@example.org.")
            w.person(ask, wrote=True)
        share = max(1, calls_per_turn // 4)
        _routine(w, rng, module, share)
        _failure_arcs(w, rng, module, branch, rng.sample(arcs, 2))
        _routine(w, rng, module, share)
        bg = w.call("Bash", {"command": "uv run pytest -q --slow", "run_in_background": True})
        w.result(bg, "Command running in background with ID: b1f2e3d.")
        _routine(w, rng, module, share)
        w.person(f"<task-notification>\n<task-id>b1f2e3d</task-id>\n<status>completed</status>\n<summary>Background command \"uv run pytest -q --slow\" completed (exit code 0)</summary>\n</task-notification>\n"
                 f"Read the output file to retrieve the result: /tmp/claude/{FOLDER}/tasks/b1f2e3d.output")
        if turn == 1:
            agent = f"a{rng.getrandbits(28):07x}"
            tid = w.call("Task", {"description": "Survey the module", "prompt": f"List every caller of {module}_list", "subagent_type": "Explore"})
            for _ in range(3):
                w.add({"type": "progress", "data": {"type": "agent_progress", "agentId": agent, "message": {"type": "assistant"}}, "toolUseID": tid}, chained=False)
            w.result(tid, f"Found {rng.randint(3, 30)} callers in {module}/ and api/.")
            sub = _Writer(sid, rng, w.now, sidechain=True, agent_id=agent)
            sub.person(f"List every caller of {module}_list")
            _routine(sub, rng, module, 10)
            sub.say("Done.")
            path = folder / sid / "subagents" / f"agent-{agent}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(sub.text())
            written.append(path)
        _routine(w, rng, module, share)
        _failure_arcs(w, rng, module, branch, [a for a in arcs if rng.random() < 0.3])
        if traps:
            _traps(w, module)
        w.say(f"Done: {module} changes are in and the suite passes.")
        w.add({"type": "system", "subtype": "stop_hook_summary", "hookCount": 1, "hookInfos": [{"command": f"/home/{USER}/.claude/hooks/notify.sh"}], "level": "suggestion"}, chained=False)
        if turn == 0:
            tid = w.call("Bash", {"command": "uv run pytest -q", "description": "Run the whole suite"})
            w.person([{"type": "text", "text": "[Request interrupted by user for tool use]"}])
            if index % 3 == 0:
                w.person("start the dev server in the background instead", wrote=True)  # a new request, not a correction
            else:
                w.person("No, don't run the whole suite; run only the tests of the module you changed.", wrote=True)
                w.result(w.call("Bash", {"command": f"uv run pytest {module}/tests -q"}), "8 passed")
        if turn == 1:
            w.person("This session is being continued from a previous conversation that ran out of context. Summary: the work so far.", isCompactSummary=True, isVisibleInTranscriptOnly=True)
            comp = _Writer(sid, rng, w.now, sidechain=True, agent_id="acompact-" + f"{rng.getrandbits(24):06x}")
            comp.person("Summarize the conversation so far.")
            comp.say("Summary: pagination added, tests pass.")
            path = folder / sid / "subagents" / f"agent-{comp.agent_id}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(comp.text())
            written.append(path)
    w.bare({"type": "queue-operation", "operation": "enqueue", "timestamp": w._tick(), "sessionId": sid, "content": "/mcp"})
    w.bare({"type": "queue-operation", "operation": "remove", "timestamp": w._tick(), "sessionId": sid})
    main = folder / f"{sid}.jsonl"
    main.write_text(w.text())
    if people is not None:
        people.update(w.people)
    return [main, *written]


def write_corpus(folder: Path, *, mb: float, seed: int = 7, calls_per_turn: int = 200) -> list[Path]:
    """Sessions under ``folder/-home-jdoe-projects-shop`` until about ``mb`` megabytes; returns the main session files."""
    project = Path(folder) / FOLDER
    project.mkdir(parents=True, exist_ok=True)
    rng, total, index, mains = random.Random(seed), 0, 0, []
    while total < mb * 1_000_000:
        paths = write_session(project, rng, index=index, calls_per_turn=calls_per_turn, secret=index % 5 == 1)
        total += sum(p.stat().st_size for p in paths)
        mains.append(paths[0])
        index += 1
    return mains
