"""Lesson text: cause and fix from the informative lines, the incident elided, bounded, negative
instructions kept; the same cause in two sessions recurs from two distinct sources and is accepted."""

from __future__ import annotations

import json

import pytest

from core.auxiliary import call as aux_call
from learning.purposes import transcript_shards as tp
from learning.purposes.offline import lessons
from learning.transcripts.ingest import ingest
from learning.transcripts.models import Shard
from tests.learning.transcripts.conftest import Session

IGNORED = ("Exit code 1\nThe following paths are ignored by one of your .gitignore files:\n{path}\n"
           "hint: Use -f if you really want to add them.\nhint: Turn this message off by running\n"
           'hint: "git config advice.addIgnoredFile false"')
UPSTREAM = ("Exit code 128\nfatal: The current branch {branch} has no upstream branch.\nTo push the current branch and set the "
            "remote as upstream, use\n\n    git push --set-upstream origin {branch}\n")


def _lesson(attempt, error, fix):
    return tp.offline_lessons({"kind": "self_corrected", "attempt": f"Bash: {attempt}", "failure": error, "correction": f"Bash: {fix}"})


def test_the_cause_comes_from_the_informative_lines_not_exit_code_1():
    (lesson,) = _lesson("git add src/a.py var/cache/x.db README.md", IGNORED.format(path="var/cache/x.db"), "git add src/a.py README.md")
    assert lesson == ("`git add <args>` fails: The following paths are ignored by one of your .gitignore files. "
                      "Fix: the same command without `<path>` worked.")  # one line of the error, its paths elided


def test_the_same_cause_in_two_sessions_reads_alike():
    a = _lesson("git push", UPSTREAM.format(branch="feature/checkout-v2"), "git push --set-upstream origin feature/checkout-v2")
    b = _lesson("cd /srv/shop && git push", UPSTREAM.format(branch="fix-tax-7"), "git push --set-upstream origin fix-tax-7")
    assert a == b and "<name>" in a[0] and "checkout" not in a[0]


def test_the_fix_names_what_changed_when_the_same_call_worked_again():
    (dropped,) = _lesson("git add src/a.py var/cache/x.db", IGNORED.format(path="var/cache/x.db"), "git add src/a.py")
    assert dropped.endswith("Fix: the same command without `<path>` worked.")
    (read_first,) = tp.offline_lessons({"kind": "self_corrected", "attempt": "Edit: ~/proj/app.py",
                                        "failure": "<tool_use_error>String to replace not found in file.</tool_use_error>",
                                        "correction": "Read: ~/proj/app.py\nEdit: ~/proj/app.py"})
    assert read_first == ("`Edit <path>` fails: String to replace not found in file. "
                          "Fix: ran `Read <path>` first, then the same call worked.")


@pytest.mark.parametrize("token,text", [
    ("3f2939ba-6257-bb5c-f770-1c6a5b39cd00", "error: run 3f2939ba-6257-bb5c-f770-1c6a5b39cd00 failed"),
    ("9fceb02d0ae598e95dc970b74767f19372d61af8", "fatal: bad object 9fceb02d0ae598e95dc970b74767f19372d61af8"),
    ("/home/x/app/settings.py", "error: cannot open /home/x/app/settings.py"),
    ("'orders_v2'", "error: relation 'orders_v2' does not exist"),
])
def test_incident_tokens_are_elided(token, text):
    assert token not in lessons.elide(text)


@pytest.mark.parametrize("name,error", [
    ("`prompt`", "<tool_use_error>InputValidationError: Task failed due to the following issue:\n"
                 "The required parameter `prompt` is missing</tool_use_error>"),
    ("'timeout'", "TypeError: run() got an unexpected keyword argument 'timeout'"),
    ("'--frobnicate'", "error: unknown option '--frobnicate'"),
])
def test_an_interface_s_own_name_stays_in_the_lesson(name, error):
    """The name of a parameter, argument or option is the same in every session and says what to fix."""
    (lesson,) = tp.offline_lessons({"kind": "self_corrected", "attempt": "Bash: tool --old", "failure": error,
                                    "correction": "Bash: tool --new"})
    assert name in lesson and "<name>" not in lesson
    quote = name[0]  # a value quoted after such a word is still elided, and its quotes go with it
    assert lessons.elide(f"argument {quote}/srv/app/settings.py{quote} is unreadable") == "argument <path> is unreadable"


def test_a_multi_kb_message_is_no_lesson_and_short_negative_instructions_are_kept():
    blob = "no " + "the logs show a stack of frames and values " * 60  # 2.6 KB, no sentence break
    assert tp.offline_lessons({"kind": "corrected", "correction": blob}) == []
    assert tp.offline_lessons({"kind": "corrected", "correction": "no, don't websearch for this."}) == ["Don't websearch for this."]
    assert tp.offline_lessons({"kind": "corrected", "correction": "Stop."}) == []
    for lesson in tp.offline_lessons({"kind": "corrected", "correction": "Never push to main. " * 40}):
        assert len(lesson) <= lessons.MAX_LESSON_CHARS


def test_a_dot_inside_a_file_name_or_a_version_ends_no_sentence():
    """As the demo's person wrote it: the lesson was published cut at "manage." and its tail drafted as a hook."""
    correction = "Migration guard: run `python manage.py makemigrations --check` before every commit. Use Python 3.12 or newer."
    assert tp.offline_lessons({"kind": "corrected", "correction": correction}) == [
        "Migration guard: run `python manage.py makemigrations --check` before every commit.",
        "Use Python 3.12 or newer."]


def test_a_models_blob_lesson_is_refused(seat, scripted_seat):
    from core.providers.llm.scripted import ScriptedProvider

    ScriptedProvider.queue(tp.SHARDS, json.dumps({"shards": [{"lesson": "x " * 2000}, {"lesson": "Tests run with `make test`, never bare pytest."}]}))
    answer = aux_call(seat=scripted_seat, stage="background", purpose=tp.SHARDS, inputs={"episode": {"kind": "corrected", "correction": "No: make test, not bare pytest."}})
    assert answer.value == ["Tests run with `make test`, never bare pytest."]


def _session(sid, day, path, branch):
    s = Session(sid, day=day, cwd=f"/home/dev{day}/shop")
    s.user("Commit and push the pagination work.")
    for i in range(30):
        s.call(f"r{i}", name="Read", file_path=f"/home/dev{day}/shop/orders/f{i}.py").result(f"r{i}", "code\n" * 40)
    s.call("a1", command=f"git add orders/views.py {path}").result("a1", IGNORED.format(path=path), error=True)
    s.call("a2", command="git add orders/views.py").result("a2", "")
    s.call("p1", command="git push").result("p1", UPSTREAM.format(branch=branch), error=True)
    s.call("p2", command=f"git push --set-upstream origin {branch}").result("p2", "ok")
    return s


def test_two_sessions_with_the_same_cause_recur_from_two_distinct_sources_and_are_accepted(seat, tmp_path):
    ingest(paths=[str(_session("sess-1", 1, "var/cache/index.db", "feature/a").write(tmp_path / "one.jsonl"))], seat=seat)
    assert set(Shard.objects.values_list("status", flat=True)) == {Shard.PENDING}
    summary = ingest(paths=[str(_session("sess-2", 2, "tmp/profile.out", "fix-b").write(tmp_path / "two.jsonl"))], seat=seat)
    accepted = [(shard, reason) for shard, status, reason in summary.decisions if status == Shard.ACCEPTED]
    assert len(accepted) == 2
    for shard, reason in accepted:
        assert "recurs across 2 distinct sources" in reason
        assert sorted(shard.evidence["sources"]) == ["sess-1", "sess-2"]
    texts = {shard.text for shard, _r in accepted}
    assert any("ignored by one of your .gitignore files" in t for t in texts)
    assert any("no upstream branch" in t for t in texts)


@pytest.mark.parametrize("command,shape", [
    ("uv run pytest search/tests -q", "uv run pytest <args> -q"),
    ("poetry run mypy src", "poetry run mypy <args>"),
    ("bundle exec rspec spec/models/user_spec.rb", "bundle exec rspec <args>"),
    ("npm run lint -- --fix", "npm run lint -- --fix"),
    ("go run ./cmd/server", "go run <args>"),  # a path after the runner is the incident's, still elided
])
def test_what_a_runner_ran_stays_in_the_command_s_shape(command, shape):
    assert lessons.command_shape(command) == shape


def test_a_fix_that_runs_the_tool_through_the_project_s_runner_says_which_tool():
    (lesson,) = _lesson("pytest search/tests -q", "Exit code 2\nModuleNotFoundError: No module named 'django'",
                        "uv run pytest search/tests -q")
    assert lesson.endswith("Fix: `uv run pytest <args> -q` worked instead.")


def test_a_serialized_output_reads_as_its_informative_line_and_the_fix_names_the_command_run_first():
    output = "Exit code 1\n" + json.dumps({"hook": "lint", "output": "lint check failed:\n\n[lint] 3 problems in "
                                          "app/views.py\nRun 'eslint --fix' to fix.\n"})
    (lesson,) = tp.offline_lessons({"kind": "self_corrected", "attempt": 'Bash: git commit -m "Add the list"', "failure": output,
                                    "correction": "Bash: npx eslint --fix\nBash: git commit -m \"Add the list\""})
    assert lesson == "`git commit -m <args>` fails: lint check failed. Fix: ran `npx eslint --fix` first, then the same command worked."


@pytest.mark.parametrize("line,shown", [
    ("The user doesn't want to proceed with this tool use, it isn't 'safe'.",
     "The user doesn't want to proceed with this tool use, it isn't <name>."),  # no elision eats "doesn't"
    ("error: cannot open '/srv/app/settings.py'", "error: cannot open <path>"),  # no placeholder inside a quotation
])
def test_elision_leaves_whole_words_and_no_quoted_placeholder(line, shown):
    assert lessons.elide(line) == shown


@pytest.mark.parametrize("attempt,error,correction", [
    # the same call with other arguments: nothing nameable changed
    ("Task: general-purpose", "<tool_use_error>InputValidationError: The required parameter `prompt` is missing</tool_use_error>",
     "Task: general-purpose"),
    # the project's own test failing its assertion: the code under test was wrong
    ("Bash: uv run pytest app/tests -q", "E       AssertionError: assert 404 == 200", "Edit: app/urls.py\nBash: uv run pytest app/tests -q"),
    ("Bash: mix test test/a_test.exs", "Assertion with == failed\ncode:  assert a == b", "Bash: mix test test/a_test.exs"),
    # a stray character typed as a command
    ("Bash: \\\\", "(eval):1: permission denied: \\\\", "Bash: ls -la"),
    # a call the person turned down: what they say next is the lesson
    ("Bash: rm -rf build", "The user doesn't want to proceed with this tool use. The tool use was rejected.",
     "Bash: rm -rf build --dry-run"),
    # a command that only looked is no fix
    ("Bash: git commit -m x", "hook failed: 2 files would be reformatted", "Bash: git status\nBash: git commit -m x"),
])
def test_no_lesson_where_nothing_nameable_fixed_a_misuse(attempt, error, correction):
    assert tp.offline_lessons({"kind": "self_corrected", "attempt": attempt, "failure": error, "correction": correction}) == []


def test_a_command_that_only_looks_after_a_failure_is_not_its_recovery(tmp_path):
    from learning.transcripts.adapters.claude_code import ClaudeCodeAdapter

    s = Session()
    s.user("Commit the list view.")
    s.call("c1", command='git commit -m "Add the list"').result("c1", "hook failed: 2 files would be reformatted", error=True)
    s.call("s1", command="git status --short").result("s1", " M app/views.py")
    s.call("f1", command="black .").result("f1", "2 files reformatted")
    s.call("c2", command='git commit -m "Add the list"').result("c2", "[main 1a2b3c4] Add the list")
    (episode,) = ClaudeCodeAdapter().read(str(s.write(tmp_path / "s.jsonl")), "").episodes
    assert episode.correction == 'Bash: black .\nBash: git commit -m "Add the list"'
    (lesson,) = tp.offline_lessons({"kind": episode.kind, "attempt": episode.attempt, "failure": episode.failure,
                                    "correction": episode.correction})
    assert lesson.endswith("Fix: ran `black .` first, then the same command worked.")
