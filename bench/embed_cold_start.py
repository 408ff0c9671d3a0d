"""Cold start of the local embedder: a fresh process's first embed, model load included.

Runs each runtime in its own fresh interpreter (timed after Django's setup, which both share), ``--runs`` times: the numpy runtime the
``local`` embedder uses, and beside it the reference pipeline it replaced (torch +
sentence-transformers, the ``torch`` extra) when that is installed. Prints the median import+load
+first-embed time, the median of 20 warm single-note embeds after it, and the peak resident memory.
No database is involved, so there is no engine to choose.

Usage: python bench/embed_cold_start.py [--runs 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTE = "The deploy failed because the migration locked the users table."


def child(runtime: str) -> None:
    import django

    django.setup()  # the same for both runtimes: timed from here
    started = time.monotonic()
    if runtime == "numpy":
        from core.providers.embeddings.local import LOCAL_MODEL, load_model

        model = load_model()

        def embed(text):
            return model.encode([text])[0]
    else:
        import torch
        from sentence_transformers import SentenceTransformer

        from core.providers.embeddings.local import LOCAL_MODEL, model_dir

        torch.set_num_threads(1)
        model = SentenceTransformer(str(model_dir()), device="cpu", local_files_only=True)

        def embed(text):
            return model.encode([text], normalize_embeddings=True)[0]

    embed(NOTE)
    first = time.monotonic() - started
    warm = []
    for _ in range(20):
        t = time.perf_counter()
        embed(NOTE)
        warm.append(time.perf_counter() - t)
    import resource

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"model": LOCAL_MODEL, "first": first, "warm": statistics.median(warm), "rss": rss}))


def measure(runtime: str, runs: int) -> dict | None:
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="crewlet.settings", PYTHONPATH=ROOT, HF_HUB_OFFLINE="1")
    out = []
    for _ in range(runs):
        proc = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--child", runtime],
            cwd=ROOT, env=env, capture_output=True, text=True,
        )
        if proc.returncode:
            print(f"  {runtime}: failed\n{proc.stderr[-2000:]}")
            return None
        out.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return {
        "first": statistics.median(r["first"] for r in out),
        "warm": statistics.median(r["warm"] for r in out),
        "rss": max(r["rss"] for r in out),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--child", default="")
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    print(f"embed cold start: fresh process -> first embed of one note (median of {args.runs} processes)")
    numpy_figures = measure("numpy", args.runs)
    if numpy_figures is None:
        return 1
    reference = None
    if importlib.util.find_spec("sentence_transformers") and importlib.util.find_spec("torch"):
        reference = measure("torch", args.runs)
    print(f"{'runtime':<34}{'first embed':>12}{'warm note':>11}{'peak RSS':>10}")
    rows = [("numpy (local embedder)", numpy_figures)]
    rows.append(("torch + sentence-transformers", reference) if reference else ("torch + sentence-transformers", None))
    for label, f in rows:
        if f is None:
            print(f"{label:<34}{'not installed (the torch extra)':>33}")
        else:
            print(f"{label:<34}{f['first']:>11.2f}s{f['warm'] * 1000:>9.1f}ms{f['rss']:>8.0f}MB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
