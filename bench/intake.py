"""Intake throughput: ``POST /api/v1/turns`` accepted per second by the real server.

Starts the service as ``make serve`` does (gunicorn, ``crewlet.wsgi``, 2 workers x 8 threads, production
settings) on a loopback port against a throwaway embedded PostgreSQL, with the ORM broker (no
qcluster runs, so the figure is intake alone). ``--clients`` threads post distinct turns for ``--seconds``. Printed
beside it, measured the same way against the same server: the floor, a POST answered 401 before
any database work (no token).

Usage: python bench/intake.py [--clients 8] [--seconds 10] [--workers 2] [--threads 8]

Beside each rate: CPU milliseconds per request of gunicorn's processes, of the clients (this process:
they share the machine's cores with the server, so their cost is shown, not assumed away) and of the
database server's processes.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import threading
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
URL_PATH = "/api/v1/turns"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def body(seat: str) -> dict:
    """A chat turn's record as a runtime posts it after its prefetch: it carries the ask and the skills
    the prompt offered (both from the prefetch's answer), so intake has nothing to complete."""
    n = uuid.uuid4().hex
    return {
        "run_id": f"bench-{n}", "work_key": f"chat:msg-{n}", "seat": seat, "conversation_id": "chat:C1:thread-1",
        "conversation_kind": "chat", "label": "Message from Maya: Slack message", "subject_is_label": True,
        "ask": "Thanks! I prefer short bullet-point status updates.", "skills_offered": [],
        "plan_summary": "Replied in the thread with a short status summary.",
        "tool_sequence": ["mattermost_post_message"], "tools_called": ["mattermost_post_message"],
        "review_outcome": "done", "interactions": [{"sender": {"handle": "maya", "platform": "mattermost",
                                                              "display_name": "Maya", "kind": "human"},
                                                   "body": "Thanks! I prefer short bullet-point status updates."}],
    }


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a process and every live descendant of it, from /proc (Linux)."""
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total


def drive(port: int, clients: int, seconds: float, token: str | None, seat: str) -> tuple[int, int, float, float]:
    """(answered as expected, other answers, seconds, the clients' own CPU seconds) with ``clients``
    keep-alive connections.

    The clients are the standard library's ``http.client`` (the lightest HTTP/1.1 client at hand):
    they share the machine's cores with the server, so the less they cost, the more the figure is
    the server's.
    """
    import http.client
    import json

    ok, other, lock, stop = [0], [0], threading.Lock(), time.monotonic() + seconds
    expected = 202 if token else 401
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}

    def client():
        http_conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            while time.monotonic() < stop:
                http_conn.request("POST", URL_PATH, body=json.dumps(body(seat)), headers=headers)
                response = http_conn.getresponse()
                response.read()
                if response.getheader("Connection", "").lower() == "close":
                    http_conn.close()
                with lock:
                    if response.status == expected:
                        ok[0] += 1
                    else:
                        other[0] += 1
        finally:
            http_conn.close()

    started, cpu = time.monotonic(), time.process_time()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return ok[0], other[0], time.monotonic() - started, time.process_time() - cpu


def manage(env: dict, *args: str) -> str:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True).stdout


def run(url: str, args, db_pid: int) -> int:
    """The rates and CPU per request: gunicorn's processes, the clients, and the database server's processes."""
    env = dict(os.environ, DATABASE_URL=url, DJANGO_DEBUG="0", DJANGO_SECURE_SSL_REDIRECT="0", CREWLET_LOG_LEVEL="WARNING",
               CREWLET_CONFIG=os.path.join(ROOT, "crewlet.toml.example"), DJANGO_SETTINGS_MODULE="crewlet.settings")
    env.pop("CREWLET_Q_SYNC", None)
    manage(env, "migrate", "--verbosity", "0")
    manage(env, "apply_config", env["CREWLET_CONFIG"])
    seat = "ana"
    token = manage(env, "create_seat_token", seat).strip().split()[-1]
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "crewlet.wsgi", "--bind", f"127.0.0.1:{port}", "--workers",
         str(args.workers), "--threads", str(args.threads), "--log-level", "warning"], cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        drive(port, args.clients, 2.0, token, seat)  # warm every worker and connection, not counted
        rows = []
        for name, tok in (("POST /turns accepted (202)", token), ("floor: POST answered 401, no token", None)):
            server_cpu, db_cpu = tree_cpu(server.pid), tree_cpu(db_pid)
            ok, other, took, client_cpu = drive(port, args.clients, args.seconds, tok, seat)
            server_cpu, db_cpu = tree_cpu(server.pid) - server_cpu, tree_cpu(db_pid) - db_cpu
            n = max(ok + other, 1)
            rows.append((name, ok / took, other, server_cpu / n * 1000, client_cpu / n * 1000, db_cpu / n * 1000))
        print(f"\n== intake: gunicorn {args.workers} worker(s) x {args.threads} threads, {args.clients} clients, "
              f"{args.seconds:.0f}s each (load average {os.getloadavg()[0]:.1f})")
        print(f"   {'':<38} {'rate':>10}   CPU per request: server, clients, database")
        for name, rate, other, server_ms, client_ms, db_ms in rows:
            print(f"   {name:<38} {rate:8.1f} /s   {server_ms:5.2f} ms  {client_ms:5.2f} ms  {db_ms:5.2f} ms"
                  + (f"   ({other} other answers)" if other else ""))
        print(f"   accepted at {rows[0][1] / rows[1][1]:.0%} of the floor's rate")
    finally:
        server.terminate()
        server.wait(timeout=30)
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from fresh_db import start_pgserver

    server, url = start_pgserver()
    try:
        return run(url, args, db_pid=server.get_pid())
    finally:
        server.cleanup()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
