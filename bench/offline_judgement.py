"""The offline PersistDecider's quality on two labelled sets, and the offline skill namer's consistency.

1. The development messages (every LoCoMo dialog turn and tau-bench user message a label in
   ``bench/labels/persist_dev.tsv`` names): the set the offline rules were written from.
2. What people typed into Claude Code (``bench/labels/persist_claude_code.tsv``, the prompts of
   ``claude-code/`` in the bench data): labelled before any rule was changed against it, a kind of
   text the rules were not written for.

For each set it prints, per class, how many messages the decider stored and how many of them the
label agrees with (precision), how many of the labelled ones it found (recall), how many requests
or instructions it stored (the rule says none), and every wrong decision with its reference and
the note written. Then, over the tau-bench runs, the offline skill name of each run and how often
the trials of one task get the same name.

The labels are references only; the texts are read where the bench data lies. Prints figures,
asserts nothing.

Run: ``.venv/bin/python bench/offline_judgement.py [BENCH_DATA]`` (default ``../shared/bench-data``).
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
LABELS = ROOT / "bench" / "labels"
TODAY = "2026-12-03"

from bench import bench_data  # noqa: E402


def labels(name: str) -> list[tuple[str, str]]:
    rows = [line.split("\t") for line in (LABELS / name).read_text().splitlines() if line and not line.startswith("#")]
    return [(ref, label) for ref, label in rows]


def _locomo_sessions(conversation: dict) -> list[list[dict]]:
    keys = sorted((k for k in conversation if k.startswith("session_") and k[8:].isdigit()), key=lambda k: int(k[8:]))
    return [conversation[k] for k in keys if conversation[k]]


def dev_messages(data: Path) -> dict[str, tuple[str, str]]:
    """reference -> (sender, text) for every LoCoMo dialog turn and every tau-bench user message."""
    out = {}
    for conv in bench_data.locomo(data):
        for session in _locomo_sessions(conv["conversation"]):
            for turn in session:
                out[f"locomo:{conv['sample_id']}:{turn['dia_id']}"] = (turn["speaker"], turn["text"])
    for run in bench_data.tau(data):
        said = [m["content"] for m in run["traj"] if m.get("role") == "user" and m.get("content")]
        for i, text in enumerate(said):
            out[f"tau:{run['task_id']}:{run['trial']}:{i}"] = (run["info"]["task"]["user_id"], text)
    return out


def claude_code_prompts(data: Path) -> dict[str, tuple[str, str]]:
    """reference (file:line) -> ("The requester", text) for every record a person wrote."""
    from learning.transcripts.adapters import claude_code_records as rec

    root = data / "claude-code"
    out = {}
    for path in sorted(root.rglob("*.jsonl")):
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            said = rec.person_wrote(record) if isinstance(record, dict) and not record.get("isSidechain") else None
            if said:
                out[f"{path.relative_to(root)}:{n}"] = ("The requester", said)
    return out


def judge(name: str, texts: dict[str, tuple[str, str]], labelled: list[tuple[str, str]]) -> None:
    from learning.purposes.persist_decision import Inputs, decide

    rows = []
    for ref, label in labelled:
        if ref not in texts:
            print(f"  {ref}: not in the data (skipped)")
            continue
        sender, text = texts[ref]
        decision = decide(Inputs(interactions=[{"sender": sender, "body": text, "sender_kind": "human"}], today=TODAY))
        rows.append((ref, label, decision, text))
    print(f"\n{name}: {len(rows)} labelled messages ({', '.join(f'{k} {v}' for k, v in sorted(Counter(r[1] for r in rows).items()))})")
    predicted = Counter(d["classification"] for _, _, d, _ in rows)
    for kind in ("LONG", "SHORT", "DOC"):
        right = sum(1 for _, label, d, _ in rows if d["classification"] == kind == label)
        labelled_n = sum(1 for _, label, _, _ in rows if label == kind)
        precision = f"{right / predicted[kind]:.2f}" if predicted[kind] else "n/a"
        recall = f"{right / labelled_n:.2f}" if labelled_n else "n/a"
        print(f"  {kind:5} stored {predicted[kind]:3}  right {right:3}  precision {precision:>4}  "
              f"labelled {labelled_n:3}  recall {recall:>4}")
    asked = [r for r in rows if r[1] in ("NOOP:request", "NOOP:instruction")]
    stored_asks = sum(1 for r in asked if r[2]["classification"] != "NOOP")
    stored = sum(1 for r in rows if r[2]["classification"] != "NOOP")
    noop_right = sum(1 for r in rows if r[1].startswith("NOOP") and r[2]["classification"] == "NOOP")
    noop_n = sum(1 for r in rows if r[1].startswith("NOOP"))
    print(f"  requests or instructions stored: {stored_asks} of {len(asked)};  NOOP kept NOOP: {noop_right} of {noop_n};"
          f"  anything stored: {stored} of {len(rows)}")
    wrong = [r for r in rows if r[2]["classification"] != r[1].split(":")[0]]
    for ref, label, d, text in wrong:
        shown = d["content"] or "-"
        print(f"    {ref}  label {label}  decided {d['classification']}: {shown[:140]}"
              + ("" if d["content"] else f"   <- {text[:100]!r}"))


def skill_names(data: Path) -> None:
    from learning.purposes.offline import task_class

    by_task: dict[int, list[str]] = defaultdict(list)
    for run in bench_data.tau(data):
        tools = [c["function"]["name"] for m in run["traj"] if m.get("role") == "assistant" and m.get("tool_calls")
                 for c in m["tool_calls"]]
        asks = [m["content"] for m in run["traj"] if m.get("role") == "user" and m.get("content")][:1]
        by_task[run["task_id"]].append(task_class.name(tools, asks) or "-")
    if not by_task:
        return
    agree = sum(Counter(names).most_common(1)[0][1] for names in by_task.values())
    total = sum(len(names) for names in by_task.values())
    names = Counter(n for names in by_task.values() for n in names)
    print(f"\noffline skill names over {total} tau-bench runs of {len(by_task)} tasks: {len(names)} distinct; "
          f"runs named as their task's most common name: {agree}/{total} ({agree / total:.2f})")
    for name, n in names.most_common():
        print(f"  {n:3}  {name}")


def run(data: Path) -> None:
    print(f"bench data: {data} ({bench_data.describe(data)}); today is {TODAY}")
    judge("development messages (the rules were written from these)", dev_messages(data), labels("persist_dev.tsv"))
    judge("Claude Code prompts (labelled before the rules were changed against them)", claude_code_prompts(data),
          labels("persist_claude_code.tsv"))


def main(argv: list[str]) -> None:
    data = Path(argv[0] if argv else os.environ.get("CREWLET_BENCH_DATA") or ROOT.parent / "shared" / "bench-data")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crewlet.settings")
    import django

    django.setup()  # no table is read: the rules are plain functions (the skill namer reads the tools' registry)
    run(data)
    skill_names(data)


if __name__ == "__main__":
    main(sys.argv[1:])
