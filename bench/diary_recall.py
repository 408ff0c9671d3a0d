"""Recall of the diary's similarity half (hybrid, in SQL) on real conversations, on PostgreSQL.

DATA is a LoCoMo-format file or a folder holding one (e.g. ``../shared/bench-data``: ``bench_data``). One seat per
conversation; every dialog turn is written through the production writer (``learning.memory.diary.write``,
embedded on write) as a note ``speaker: text``; each question with evidence is read through
``diary.recall`` (top 10) twice: hybrid (the question's words too, as the personal-memory prefetch
and ``refresh_memory`` read it) and by vector alone (no words, the baseline), same query vector. A question is a hit when a note of one of its evidence turns is returned. Latency:
the two reads interleaved query by query, each the best of three (a shared machine).

Usage: python bench/diary_recall.py DATA
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_data  # noqa: E402  (the sibling module: finds the data by format)
from recall import CATEGORIES, dia_ids, locomo_turns, on_database, p95  # noqa: E402  (the sibling bench's LoCoMo reader)

TOP_K = 10
REPEATS = 3


def run_child(url: str, label: str, data: str) -> int:
    env = dict(os.environ, DATABASE_URL=url, DJANGO_SETTINGS_MODULE="crewlet.settings", PYTHONPATH=ROOT,
               HF_HUB_OFFLINE="1")
    return subprocess.call([sys.executable, os.path.abspath(__file__), data, "--child", label], cwd=ROOT, env=env)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("--child", default="")
    args = parser.parse_args(argv)
    args.data = os.path.abspath(args.data)
    if args.child:
        return child(args)
    return on_database(lambda url, label: run_child(url, label, args.data))


def child(args) -> int:
    import django

    sys.path.insert(0, ROOT)
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from core.providers.embeddings import get_embedder
    from crewlet.models import Company, Role, Seat, Unit
    from demo.foundation import engine_description
    from learning.memory import diary
    from learning.models import DiaryEntry

    diary.DIARY_EMBED_BUDGET = None  # wait for each note's vector: the same vector a quiet machine stores
    embedder = get_embedder()
    embedder.load() if hasattr(embedder, "load") else None
    print(f"\n== {args.child}: {engine_description()}; embedder {embedder.model}")
    company = Company.objects.create(name="Diary recall bench")
    role = Role.objects.create(company=company, name="assistant")
    unit = Unit.objects.create(company=company, key="bench", name="Bench")
    conversations = bench_data.locomo(args.data)
    if not conversations:
        raise SystemExit(f"no LoCoMo file under {args.data}")
    hits = {"hybrid": {}, "vector alone": {}}
    times: dict[str, list[float]] = {"hybrid": [], "vector alone": []}
    started = time.monotonic()
    for n, conv in enumerate(conversations):
        seat = Seat.objects.create(company=company, role=role, unit=unit, handle=f"diary{n}")
        turns = locomo_turns(conv["conversation"])
        note_turn = {}
        for t in turns:
            note = diary.write(seat=seat, content=f"{t['speaker']}: {t['text']}"[:2000], kind=DiaryEntry.LONG,
                               source="bench")
            note_turn[note.pk] = t["id"]
        ids = set(note_turn.values())
        questions = [(q, set(dia_ids(q.get("evidence", []))) & ids) for q in conv["qa"]]
        questions = [(q, ev) for q, ev in questions if ev]
        qvecs = embedder.embed_batch([q["question"] for q, _ in questions])
        for (q, evidence), qvec in zip(questions, qvecs, strict=True):
            for name, words in (("hybrid", q["question"]), ("vector alone", "")):
                best, got = float("inf"), []
                for _ in range(REPEATS):
                    t0 = time.perf_counter()
                    got = diary.recall(seat=seat, vector=qvec, model=embedder.model, query=words, limit=TOP_K)
                    best = min(best, time.perf_counter() - t0)
                times[name].append(best * 1000)
                row = hits[name].setdefault(q.get("category", 0), [0, 0])
                row[0] += 1
                row[1] += bool({note_turn.get(e.pk) for e in got} & evidence)
    print(f"\n-- LoCoMo as diary notes ({sum(len(locomo_turns(c['conversation'])) for c in conversations)} notes, "
          f"{time.monotonic() - started:.0f}s)")
    print(f"{'read':<14} {'category':<12} {'n':>4} {'R@10':>6}")
    for name, cats in hits.items():
        total = [0, 0]
        for cat in sorted(cats):
            n_q, h = cats[cat]
            total = [total[0] + n_q, total[1] + h]
            print(f"{name:<14} {CATEGORIES.get(cat, str(cat)):<12} {n_q:>4} {h / n_q:>6.3f}")
        print(f"{name:<14} {'overall':<12} {total[0]:>4} {total[1] / total[0]:>6.3f}")
    print("\nlatency (ms)        p50      p95")
    for name, ms in times.items():
        print(f"{name:<14} {statistics.median(ms):>8.2f} {p95(ms):>8.2f}")
    print(f"hybrid / vector alone p50 = {statistics.median(times['hybrid']) / statistics.median(times['vector alone']):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
