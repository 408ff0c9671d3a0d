"""``kill -9`` of the queue mid-run: is every turn still reflected exactly once, and how late?

Starts the service as ``make serve`` does (gunicorn, ``crewlet.wsgi``, production settings: DEBUG
off) on a loopback port and a real ``manage.py qcluster`` (django-q2's, with the backlog sweep's
schedule installed) against a throwaway embedded PostgreSQL. ``--clients`` threads
post ``--turns`` distinct turns over the example config's seats, each client pausing ``--pace``
seconds between posts. When the ``--kill-at``-th turn is accepted the queue is killed with
``kill -9``:

- ``--kill cluster``: every process of the cluster (main, sentinel, workers, pusher, monitor); a
  new ``qcluster`` starts ``--down`` seconds later;
- ``--kill workers``: only the worker processes; the sentinel starts new ones itself;
- ``--kill none``: nothing (the baseline; the same figures are taken at that turn).

Printed: turns stored, reflected exactly once, duplicates, never reflected, 5xx answers; the drain
after the kill (the kill to the last reflection) beside its floor (the turns not yet reflected at
the kill divided by the reflection rate before it); the longest seat stall (a seat with a turn
waiting and none of its turns reflected); the longest wait of one turn; and the bounds the queue
promises (stall span, retry, sweep grace, sweep period). Every wait is bounded: the run ends by itself
once every turn is reflected or the sweep's grace and two of its periods have passed the last post.

Usage: python bench/kill_drain.py --kill cluster|workers|none
       [--turns 600] [--clients 6] [--kill-at 300] [--down 5] [--pace 1.0]
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
from fresh_db import start_pgserver  # noqa: E402
from intake import body, free_port, manage  # noqa: E402

SEATS = ["ana", "bo", "cy", "dee", "ed"]  # the example config's seats
STARTUP_SECONDS = 60.0  # any process the bench starts must answer within this
STOP_SECONDS = 30.0


def wait_until(predicate, timeout: float, every: float = 0.2) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(every)
    return predicate()


def listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def start_cluster(env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "manage.py", "qcluster"], cwd=ROOT, env=env,
                            stdout=log.open("a"), stderr=subprocess.STDOUT, start_new_session=True)


def stop_group(proc: subprocess.Popen) -> None:
    """SIGTERM (the graceful stop), then SIGKILL of the process group past ``STOP_SECONDS``."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # anything of the group left behind
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        pass


def group_members(pgid: int) -> list[int]:
    """The live processes of process group ``pgid`` (read from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split() if entry.isdigit() else []
        except OSError:
            continue
        if fields and fields[0] != "Z" and int(fields[2]) == pgid:
            found.append(int(entry))
    return found


def live_workers(log: Path) -> list[int]:
    """The cluster's worker processes still alive, as its log names them ("ready for work at PID")."""
    pids = [int(p) for p in re.findall(r"ready for work at (\d+)", log.read_text())]
    alive = []
    for pid in dict.fromkeys(pids):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.append(pid)
    return alive


class Clients:
    """``clients`` threads posting ``turns`` turns in all; ``on_accepted(n)`` after the n-th 202."""

    def __init__(self, port: int, tokens: dict[str, str], turns: int, clients: int, pace: float, on_accepted):
        self.port, self.tokens, self.turns, self.clients, self.pace = port, tokens, turns, clients, pace
        self.on_accepted = on_accepted
        self.lock = threading.Lock()
        self.issued = self.accepted = self.server_errors = self.other = 0
        self.run_ids: list[tuple[str, str]] = []  # (seat, run id) of every accepted turn

    def _next(self) -> bool:
        with self.lock:
            if self.issued >= self.turns:
                return False
            self.issued += 1
            return True

    def _client(self, i: int) -> None:
        import httpx2

        seat = SEATS[i % len(SEATS)]
        with httpx2.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=60,
                           headers={"Authorization": f"Bearer {self.tokens[seat]}"}) as http:
            while self._next():
                turn = body(seat)
                turn["run_id"] = f"kill-{uuid.uuid4().hex}"
                for _attempt in range(3):  # a connection refused is retried; an answer is counted once
                    try:
                        status = http.post("/api/v1/turns", json=turn).status_code
                        break
                    except Exception:  # noqa: BLE001 - a transport error: the server restarting a worker
                        time.sleep(1)
                else:
                    status = 0
                with self.lock:
                    if status == 202:
                        self.accepted += 1
                        self.run_ids.append((seat, turn["run_id"]))
                        n = self.accepted
                    else:
                        n = 0
                        if status >= 500:
                            self.server_errors += 1
                        else:
                            self.other += 1
                if n:
                    self.on_accepted(n)
                time.sleep(self.pace)

    def run(self) -> float:
        started = time.time()
        threads = [threading.Thread(target=self._client, args=(i,), daemon=True) for i in range(self.clients)]
        for t in threads:
            t.start()
        bound = self.turns * (self.pace + 60) / self.clients + 60  # a post answers within its timeout
        for t in threads:
            t.join(timeout=max(1.0, bound - (time.time() - started)))
        return started


def seat_stalls(turns: list[tuple[str, datetime, datetime | None]], end: datetime) -> float:
    """The longest span in which a seat had a turn waiting and none of its turns was reflected."""
    longest = 0.0
    for seat in {t[0] for t in turns}:
        mine = [(received, reflected or end) for s, received, reflected in turns if s == seat]
        progress = None
        for done in sorted({r for _, r in mine}):
            waiting = [received for received, reflected in mine if reflected >= done and (progress is None or reflected > progress)]
            start = min(waiting)
            if progress is not None:
                start = max(start, progress)
            longest = max(longest, (done - start).total_seconds())
            progress = done
    return longest


def run(args) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="crewlet-kill-drain-"))
    pg, url = start_pgserver()
    env = dict(os.environ, DATABASE_URL=url, DJANGO_DEBUG="0", DJANGO_SECURE_SSL_REDIRECT="0", CREWLET_LOG_LEVEL="WARNING",
               CREWLET_CONFIG=str(ROOT / "crewlet.toml.example"), DJANGO_SETTINGS_MODULE="crewlet.settings")
    env.pop("CREWLET_Q_SYNC", None)
    os.environ.update({k: env[k] for k in ("DATABASE_URL", "DJANGO_DEBUG", "CREWLET_CONFIG", "DJANGO_SETTINGS_MODULE")})
    procs: list[subprocess.Popen] = []
    try:
        manage(env, "migrate", "--verbosity", "0")
        manage(env, "apply_config", env["CREWLET_CONFIG"])
        manage(env, "install_schedules")
        tokens = {seat: manage(env, "create_seat_token", seat).strip().split()[-1] for seat in SEATS}

        import django

        django.setup()
        from django.conf import settings
        from django.db.models import Count

        from learning.models import Episode, Turn
        from learning.passes.schedules import REFLECT_SWEEP_INTERVAL_SECONDS
        from learning.reflection import sweep

        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "crewlet.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "2",
             "--threads", "4", "--log-level", "warning"], cwd=ROOT, env=env, start_new_session=True,
            stdout=(tmp / "gunicorn.log").open("w"), stderr=subprocess.STDOUT)
        procs.append(server)
        if not wait_until(lambda: listening(port), STARTUP_SECONDS):
            raise RuntimeError("gunicorn never listened")
        log = tmp / "qcluster.log"
        procs.append(start_cluster(env, log))
        if not wait_until(lambda: len(live_workers(log)) >= int(settings.Q_CLUSTER["workers"]), STARTUP_SECONDS):
            raise RuntimeError(f"qcluster never started its workers:\n{log.read_text()[-2000:]}")

        mark: dict = {}
        trigger = threading.Event()

        def on_accepted(n: int) -> None:
            if n == args.kill_at:
                trigger.set()

        def killer() -> None:
            if not trigger.wait(timeout=args.turns * (args.pace + 60)):
                return
            killed: list[int] = []
            if args.kill == "cluster":
                cluster = procs[-1]
                killed.extend(group_members(cluster.pid))  # main, sentinel, workers, pusher, monitor
                os.killpg(cluster.pid, signal.SIGKILL)
            elif args.kill == "workers":
                for pid in live_workers(log):
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
            mark["at"] = time.time()
            mark["killed"] = killed
            mark["stored"] = Turn.objects.count()
            mark["reflected"] = Turn.objects.filter(reflected_at__isnull=False).count()
            if args.kill == "cluster":
                procs[-1].wait(timeout=STOP_SECONDS)
                time.sleep(args.down)
                procs.append(start_cluster(env, log))
            from django.db import connections

            connections.close_all()

        kill_thread = threading.Thread(target=killer, daemon=True)
        kill_thread.start()
        clients = Clients(port, tokens, args.turns, args.clients, args.pace, on_accepted)
        posting_started = clients.run()
        posted_until = time.time()
        trigger.set()  # fewer accepted than --kill-at: the killer runs now rather than never
        kill_thread.join(timeout=STOP_SECONDS + args.down + 10)

        bound = sweep.grace_seconds() + 2 * REFLECT_SWEEP_INTERVAL_SECONDS + 30
        drained = wait_until(lambda: not Turn.objects.filter(reflected_at__isnull=True).exists(), bound, every=1.0)
        end = time.time()

        accepted = {run_id for _, run_id in clients.run_ids}
        turns = list(Turn.objects.filter(run_id__in=accepted).values_list("seat__handle", "run_id", "received_at",
                                                                            "reflected_at"))
        episodes = dict(Episode.objects.filter(kind=Episode.RAW, run_id__in=accepted).values("run_id")
                        .annotate(n=Count("id")).values_list("run_id", "n"))
        once = sum(1 for _, run_id, _, reflected in turns if reflected and episodes.get(run_id, 0) <= 1)
        duplicates = sum(1 for n in episodes.values() if n > 1)
        never = sum(1 for *_, reflected in turns if reflected is None)
        reflected_no_episode = sum(1 for _, run_id, _, reflected in turns if reflected and run_id not in episodes)
        from django.utils import timezone

        end_dt = timezone.now()
        last = max((r for *_, r in turns if r), default=None)
        waits = [((r or end_dt) - received).total_seconds() for _, _, received, r in turns]
        stall = seat_stalls([(s, received, r) for s, _, received, r in turns], end_dt)

        at = mark.get("at", posted_until)
        pre_rate = mark.get("reflected", 0) / max(1e-9, at - posting_started)
        left = len(accepted) - mark.get("reflected", 0)
        floor = left / pre_rate if pre_rate else float("inf")
        drain = (last.timestamp() - at) if last else float("nan")
        print(f"\n== kill_drain, --kill {args.kill}: {args.turns} turns from {args.clients} clients "
              f"over {len(SEATS)} seats, gunicorn 2x4 (DEBUG {'on' if settings.DEBUG else 'off'}), "
              f"{settings.Q_CLUSTER['workers']} queue workers")
        print(f"   kill at turn {args.kill_at}: {len(mark.get('killed', []))} process(es) killed "
              f"{at - posting_started:.1f}s in, {mark.get('stored', '?')} stored, {left} of {args.turns} not yet reflected"
              + (f"; new qcluster {args.down:.0f}s later" if args.kill == "cluster" else ""))
        print(f"   logs in {tmp}")
        print(f"   turns stored           {len(turns)} / {args.turns} posted ({clients.accepted} answered 202)")
        print(f"   reflected exactly once {once}")
        print(f"   duplicates             {duplicates}")
        print(f"   never reflected        {never}" + ("" if drained else f" (after waiting {bound:.0f}s)"))
        if reflected_no_episode:
            print(f"     of which no episode  {reflected_no_episode} (closed by a gate)")
        print(f"   5xx answers            {clients.server_errors}" + (f" ({clients.other} other non-202)" if clients.other else ""))
        print(f"   drain after the kill   {drain:.0f}s   floor {floor:.0f}s "
              f"({left} left / {pre_rate:.2f} turns/s before the kill); posting ended {posted_until - at:.0f}s after it")
        print(f"   longest seat stall     {stall:.0f}s")
        print(f"   longest wait of a turn {max(waits, default=0):.0f}s")
        print(f"   bounds: stall span {sweep.stall_seconds()}s, retry {settings.Q_CLUSTER['retry']}s, "
              f"task timeout {settings.Q_CLUSTER['timeout']}s, sweep grace {sweep.grace_seconds()}s, "
              f"sweep every {REFLECT_SWEEP_INTERVAL_SECONDS}s; run took {end - posting_started:.0f}s")
        return 0 if drained and not duplicates and not clients.server_errors else 1
    finally:
        for proc in reversed(procs):
            stop_group(proc)
        from django.db import connections

        connections.close_all()
        pg.cleanup()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kill", required=True, choices=["cluster", "workers", "none"])
    parser.add_argument("--turns", type=int, default=600)
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--kill-at", type=int, default=300)
    parser.add_argument("--down", type=float, default=5.0)
    parser.add_argument("--pace", type=float, default=1.0)
    args = parser.parse_args(argv)
    return run(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
