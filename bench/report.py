"""Write docs/benchmarks.md from the outputs ``make bench`` kept under var/bench/ (one ``NAME.txt`` a run).

Each bench prints its figures beside their floor or baseline from the same run; this page opens with
one table of the headline figures (today's, the floor or baseline, the target, the command), read
from those outputs, then gives each output whole under the command that produced it. Nothing here is
edited by hand: run ``make bench`` again to refresh it.

Usage: python bench/report.py [var/bench] [docs/benchmarks.md]
"""

from __future__ import annotations

import datetime
import os
import platform
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOISE = re.compile(r"RuntimeDirWarning|return Path\(self\.user_runtime_dir\)|^INFO |^WARNING ")


def _cpu() -> str:
    """The processor's model name and a comma (Linux), or nothing: the absolute figures depend on it."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
    except OSError:
        return ""
    return f"{names[0]}, " if names else ""


def main(argv: list[str]) -> int:
    folder = argv[0] if argv else os.path.join(ROOT, "var", "bench")
    target = argv[1] if len(argv) > 1 else os.path.join(ROOT, "docs", "benchmarks.md")
    runs = sorted(f for f in os.listdir(folder) if f.endswith(".txt")) if os.path.isdir(folder) else []
    if not runs:
        print(f"no bench output under {folder}: run `make bench`")
        return 1
    today = datetime.date.today().isoformat()
    lines = [
        "# Benchmarks",
        "",
        f"Written by `make bench` on {today} ({platform.machine()}, {_cpu()}{os.cpu_count()} cores, "
        f"Python {platform.python_version()}). Each figure stands beside its floor or baseline measured in "
        "the same run: on a shared machine the ratios hold, the absolute times do not.",
        "",
    ]
    outputs = {}
    for name in runs:
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            outputs[name[:-4]] = [line.rstrip() for line in f if not NOISE.search(line)]
    lines += summary(outputs)
    for name in runs:
        text = outputs[name[:-4]]
        command = text[0].removeprefix("$ ") if text and text[0].startswith("$ ") else f"python bench/{name[:-4]}.py"
        body = [line for line in text[1:] if line.strip()] if text and text[0].startswith("$ ") else text
        lines += [f"## `{command}`", "", "```", *body, "```", ""]
    with open(target, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print(f"wrote {target} from {len(runs)} bench run(s)")
    return 0


N = r"([\d.,]+)"
# (bench, figure, target, pattern of today's figures, how they read, pattern of the floor or baseline, how it reads)
ROWS = [
    ("prefetch_latency", "rich turn start p50 / p95, the real embedder", "≤ 25 / 60 ms",
     rf"local embedder(?s:.*?)rich trigger\s+p50\s+{N} ms\s+p95\s+{N} ms", "{} / {} ms",
     rf"local embedder(?s:.*?)floor \(embed \+ 4 raw SELECTs\)\s+p50\s+{N} ms(?s:.*?)embed alone\s+p50\s+{N} ms",
     "embed + 4 raw SELECTs: {} ms (the embed alone: {} ms)"),
    ("intake", "`POST /turns` accepted under gunicorn", "≥ 300 /s",
     rf"POST /turns accepted \(202\)\s+{N} /s", "{} /s", rf"answered 401, no token\s+{N} /s", "401 before any query: {} /s"),
    ("reflect_throughput", "reflection, sequential / 4 threads / 2 processes", "≥ 100 turns/s",
     rf"sequential:\s+{N} turns/s(?s:.*)4 threads:\s+{N} turns/s(?s:.*)2 processes:\s+{N} turns/s", "{} / {} / {} turns/s",
     rf"floor, same run:\s+{N} turns/s", "the same rows written: {} turns/s"),
    ("vector_index", "100,000-episode seat: `query_episodes` / turn-start recall p50", "≤ 50 ms",
     rf"query_episodes ranking \(limit 10\)\s+{N}\s+[\d.]+\s+{N}(?s:.*)turn start recall \(limit 3\)\s+{N}\s+[\d.]+\s+{N}",
     "{0} / {2} ms", None, "exact scan {1} / {3} ms"),
    ("vector_index", "100,000-episode seat: recall@10 of the index", "≥ 0.95",
     rf"recall@10 of the index against the exact scan: {N}", "{}", None, ""),
    ("recall", "tau-bench same-task @1 / @3", "≥ 0.85 / 0.95",
     rf"project \(query_episodes\)\s+{N}\s+{N}\s+[\d.]+", "{} / {}",
     rf"cosine\+BM25 RRF\s+{N}\s+{N}\s+[\d.]+\n", "RRF {} / {}"),
    ("recall", "LoCoMo turn R@1 / R@5 / R@10", "R@10 ≥ 0.80",
     rf"project \(query_episodes\)\s+overall\s+\d+\s+{N}\s+{N}\s+{N}", "{} / {} / {}",
     rf"cosine\+BM25 RRF\s+overall\s+\d+\s+{N}\s+{N}\s+{N}", "RRF {} / {} / {}"),
    ("recall", "LoCoMo session Hit@1", "≥ 0.70",
     rf"session Hit@1\s+Hit@10\s+project \(query_episodes\)\s+{N}", "{}",
     rf"session Hit@1(?s:.*?)cosine\+BM25 RRF\s+{N}", "RRF {}"),
    ("recall", "`query_episodes` tool call, hybrid / vector-only p50", "≤ 1.5x",
     rf"tool fused/vector p50 = {N}x", "{}x", None, ""),
    ("recall_no_context", "LoCoMo, each message alone, R@1 / R@5 / R@10", "",
     rf"project \(query_episodes\)\s+overall\s+\d+\s+{N}\s+{N}\s+{N}", "{} / {} / {}",
     rf"cosine\+BM25 RRF\s+overall\s+\d+\s+{N}\s+{N}\s+{N}", "RRF {} / {} / {}"),
    ("offline_judgement", "offline notes: LONG precision / recall; requests stored", "",
     rf"LONG\s+stored\s+\d+\s+right\s+\d+\s+precision {N}\s+labelled\s+\d+\s+recall {N}"
     rf"(?s:.*?)requests or instructions stored: (\d+ of \d+)", "{} / {}; {}", None, None),
    ("real_model", "real model: stored memories an answer check rejects", "0",
     r"stored memories an answer check rejects: (\d+ of \d+)", "{}", None, None),
    ("kill_drain_cluster", "queue killed under load: duplicates / never reflected", "0 / 0",
     r"duplicates\s+(\d+)\s+never reflected\s+(\d+)", "{} / {}", None, None),
]


def summary(outputs: dict[str, list[str]]) -> list[str]:
    """One table of the headline figures, each beside its floor or baseline from the same run and its
    target, read from the outputs below it; a bench not run today, or a figure it did not print, is left out."""
    rows = []
    for bench, figure, target, pattern, shown, base_pattern, base_shown in ROWS:
        text = "\n".join(line.strip() for line in outputs.get(bench, []))
        found = re.search(pattern, text)
        if not found:
            continue
        base = ""
        if base_pattern:
            floor = re.search(base_pattern, text)
            base = base_shown.format(*floor.groups()) if floor else ""
        elif base_shown:  # read off today's own match
            base = base_shown.format(*found.groups())
        first = outputs[bench][0]
        command = first.removeprefix("$ ").split("  #")[0] if first.startswith("$ ") else f"python bench/{bench}.py"
        rows.append(f"| {figure} | {shown.format(*found.groups())} | {base} | {target} | `{command}` |")
    if not rows:
        return []
    return ["| figure | today | floor or baseline, same run | target | command |", "|---|---|---|---|---|", *rows, ""]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
