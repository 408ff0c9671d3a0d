"""'A person wrote this' over hand-labelled records: precision and recall at least 95 %.

Every record of the dev corpus of real sessions is classified (user records of every pseudo-user
kind, and every other record type the harness writes); the labels below name the records a person
wrote, by file and line, read by hand. Generated 2.x sessions (``bench/claude_sessions.py``) carry
their own ground truth. A slash command with typed arguments is the person's request; a bare one
(``/mcp``, ``/init``) is the harness's, and so are task notifications and interrupts.
"""

from __future__ import annotations

import json
import random

from bench.claude_sessions import write_session
from learning.transcripts.adapters import claude_code_records as rec
from tests.learning.transcripts.dev_corpus import CLAUDE_CODE, dev_files, needs_dev_corpus

# file (under claude-code/) -> the line numbers of records a person wrote, read by hand
PERSON = {
    "cclog-test-data/edge_cases.jsonl": {1, 3, 7, 12},  # 7: a slash command with typed arguments
    "cclog-test-data/representative_messages.jsonl": {1, 3, 7, 11},
    "cclog-test-data/session_b.jsonl": {1, 3},
    "cclog-test-data/todowrite_examples.jsonl": {1, 8},
    "ccviewer-sample-project/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl": set(),  # a bare /init and its expansion
    "ccviewer-sample-project/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl": {1},  # /orchestrator with arguments
    "ccviewer-sample-project/agent-test-hash-123.jsonl": set(),
    "ccviewer-sample-project/agent-test-hash-456.jsonl": set(),
    "ccviewer-sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl": {2, 434},
    "spotter-small/short.jsonl": {4},
    "spotter-small/subagent.jsonl": {4, 71},  # 4: /handgemacht:create-beads with arguments
    "spotter-small/tool_heavy.jsonl": {4, 26},  # 21 is a bare /mcp, 9 its queue operation
}


def _score(pairs) -> tuple[float, float, list]:
    """Precision and recall of ``person_wrote`` over ``(record, is_person)`` pairs, and the misses."""
    tp = fp = fn = 0
    misses = []
    for where, record, truth in pairs:
        said = rec.person_wrote(record) is not None
        tp += said and truth
        fp += said and not truth
        fn += truth and not said
        if said != truth:
            misses.append(where)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return precision, recall, misses


def _records(path):
    for n, line in enumerate(path.read_bytes().splitlines(), 1):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            yield n, record


@needs_dev_corpus
def test_a_person_wrote_it_over_the_hand_labelled_dev_corpus():
    files = dev_files()
    assert {str(p.relative_to(CLAUDE_CODE)) for p in files} == set(PERSON), "a new dev file needs its labels"
    pairs = []
    for path in files:
        labelled = PERSON[str(path.relative_to(CLAUDE_CODE))]
        pairs.extend((f"{path.name}:{n}", record, n in labelled) for n, record in _records(path))
    kinds = {record.get("type") for _w, record, _t in pairs}
    assert {"user", "assistant", "progress", "system", "summary", "file-history-snapshot", "queue-operation"} <= kinds
    assert sum(t for *_x, t in pairs) == 20
    precision, recall, misses = _score(pairs)
    assert precision >= 0.95 and recall >= 0.95, misses


@needs_dev_corpus
def test_the_slash_command_with_arguments_is_the_request_text():
    path = CLAUDE_CODE / "ccviewer-sample-project" / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
    record = dict(_records(path))[2]
    assert rec.person_wrote(record) == "/orchestrator create TODO app by Next.js"


def test_a_person_wrote_it_over_generated_2x_sessions(tmp_path):
    people: set = set()
    rng = random.Random(3)
    paths = []
    for i in range(3):
        paths += write_session(tmp_path, rng, index=i, calls_per_turn=20, people=people)
    pairs = [(f"{p.name}:{n}", r, r.get("uuid") in people) for p in paths for n, r in _records(p)]
    assert len(people) >= 9
    kinds = {rec.user_kind(r)[0] for _w, r, _t in pairs if r.get("type") == "user"}
    assert {rec.TASK_NOTIFICATION, rec.INTERRUPT, rec.COMPACTION_SUMMARY, rec.META, rec.SIDECHAIN, None} <= kinds
    precision, recall, misses = _score(pairs)
    assert (precision, recall) == (1.0, 1.0), misses


def test_task_notifications_and_bare_slash_commands_are_not_a_person():
    def user(text):
        return {"type": "user", "message": {"role": "user", "content": text}}

    note = user("<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n</task-notification>\nRead the output file")
    assert rec.user_kind(note)[0] == rec.TASK_NOTIFICATION
    assert rec.person_wrote(user("<command-name>/mcp</command-name>\n<command-message>mcp</command-message>\n<command-args></command-args>")) is None
    typed = user("<command-message>review is running…</command-message>\n<command-name>/review-pr</command-name>\n<command-args>check the orders branch</command-args>")
    assert rec.person_wrote(typed) == "/review-pr check the orders branch"
