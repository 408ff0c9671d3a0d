"""Rewrites under concurrent answers: 8 answers x 4 rewrites at once against a slow provider.

Usage: python bench/rewrite_concurrency.py [--answers 8] [--delay 0.3] [--deadline 1.0]

The bench runs in a child process on a throwaway embedded PostgreSQL. The seat's auxiliary model is the
fake OpenAI-compatible server of the test suite (``tests/fakes``), answering every request after
``--delay`` seconds. The floor is ONE answer's four rewrites alone under the same deadline; then
``--answers`` answers start their four rewrites at the same instant, each under its own deadline.
Printed for both: texts rewritten, texts named by their size, and completions the server received
beside the ``auxiliary_spend`` rows recorded once every late call has returned. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

TEXT = "The nightly export failed because the disk on the replica was full; rotated the logs. " * 10  # ~880 bytes
REWRITES_PER_ANSWER = 4


def child(answers: int, delay: float, deadline: float) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crewlet.settings")
    import django

    django.setup()
    import openai  # noqa: F401 (imported before any deadline starts)
    from django.core.management import call_command
    from django.db import connections

    from core import late_spend
    from core.models import Event
    from crewlet import config
    from crewlet.config import schema
    from crewlet.models import Company, Role, Seat, Unit
    from learning.memory import condensation
    from tests.fakes.openai_server import FakeOpenAIServer

    call_command("migrate", verbosity=0)
    os.environ["CREWLET_BENCH_OPENAI_KEY"] = "sk-bench"
    server = FakeOpenAIServer(responder=lambda body: "Export failed: replica disk full; logs rotated.").start()
    server.delay = delay
    config.use(schema.Config(providers=schema.Providers(
        llm={"fake": schema.ProviderSpec(kind="openai_compat", model="gpt-bench", base_url=server.base_url,
                                         api_key_env="CREWLET_BENCH_OPENAI_KEY", timeout_seconds=30.0, max_retries=0)},
        embeddings=schema.EmbeddingSpec(kind="hashing", model="hashing-256", dimensions=256),
    )))
    company = Company.objects.create(name="Bench")
    role = Role.objects.create(company=company, name="swe", llm=["fake"], llm_auxiliary=["fake"])
    unit = Unit.objects.create(company=company, key="eng", name="Eng")
    seats = [Seat.objects.create(company=company, role=role, unit=unit, handle=f"s{i}") for i in range(answers)]
    for seat in seats:
        _ = seat.role, seat.company

    def phase(group: list) -> dict:
        sent_before = len(server.requests)
        rows_before = Event.objects.filter(name="auxiliary_spend").count()
        outs: list = []
        start = threading.Barrier(len(group))

        def answer(seat):
            try:
                start.wait()
                outs.extend(condensation.rewrite_all(seat=seat, texts=[TEXT] * REWRITES_PER_ANSWER, max_bytes=600,
                                                 stage="turn", timeout=deadline))
            finally:
                connections.close_all()

        threads = [threading.Thread(target=answer, args=(s,)) for s in group]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        still_out = late_spend.wait(60)
        return {"rewritten": sum(r.mode == "rewrite" for r in outs), "size": sum(r.mode == "size" for r in outs),
                "made": len(server.requests) - sent_before,
                "recorded": Event.objects.filter(name="auxiliary_spend").count() - rows_before, "out": still_out}

    floor = phase(seats[:1])
    loaded = phase(seats)
    server.close()
    print(f"{delay:.2f} s a request, {deadline:.2f} s deadline, "
          f"{REWRITES_PER_ANSWER} rewrites an answer")
    for label, r, n in (("floor: one answer alone", floor, 1), (f"{answers} answers at once", loaded, answers)):
        print(f"  {label:26s} rewritten {r['rewritten']:3d} of {n * REWRITES_PER_ANSWER:3d} | named by size {r['size']:3d}"
              f" | completions made {r['made']:3d} / recorded {r['recorded']:3d} | late calls never returned {r['out']}")


def run(args) -> int:
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from fresh_db import run_fresh

    return run_fresh([__file__, "--child", "--answers", str(args.answers), "--delay", str(args.delay),
                      "--deadline", str(args.deadline)])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=8)
    parser.add_argument("--delay", type=float, default=0.3)
    parser.add_argument("--deadline", type=float, default=1.0)
    parser.add_argument("--child", action="store_true")
    args = parser.parse_args()
    if args.child:
        child(args.answers, args.delay, args.deadline)
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
