"""Write docs/benchmarks.md from the outputs ``make bench`` kept under var/bench/ (one ``NAME.txt`` a run).

Each bench prints its figures beside their floor or baseline from the same run; this page puts today's
outputs together, each under the command that produced it, with the machine it ran on. Nothing here is
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
        f"Written by `make bench` on {today} ({platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}). Each figure stands beside its floor or baseline measured in "
        "the same run: on a shared machine the ratios hold, the absolute times do not.",
        "",
    ]
    for name in runs:
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            text = [line.rstrip() for line in f if not NOISE.search(line)]
        command = text[0].removeprefix("$ ") if text and text[0].startswith("$ ") else f"python bench/{name[:-4]}.py"
        body = [line for line in text[1:] if line.strip()] if text and text[0].startswith("$ ") else text
        lines += [f"## `{command}`", "", "```", *body, "```", ""]
    with open(target, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print(f"wrote {target} from {len(runs)} bench run(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
