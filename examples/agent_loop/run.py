"""``make example`` (``python examples/agent_loop/run.py [VAR_DIR]``): start the service and a scripted model locally, then run the agent for three turns.

The service runs as an operator would run it (``migrate``, ``apply_config``, ``create_seat_token``,
gunicorn) on a fresh ``crewlet_example`` database of the embedded PostgreSQL (``var/pgdata``), or on
``DATABASE_URL`` when it is set; the queue is synchronous (``CREWLET_Q_SYNC=1``), so each turn is
reflected by the time ``POST /turns`` answers.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import openai

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from crewlet_client import CrewletClient  # noqa: E402
from examples.agent_loop.agent import Message, run_turn  # noqa: E402
from examples.agent_loop.scripted_model import ScriptedModel  # noqa: E402

HERE = Path(__file__).resolve().parent
TURNS = [
    Message("example-1", "dana", "CI on main is red again, can you fix it?", "chat:eng:thread-1"),
    Message("example-2", "dana", "Now the release branch is red too.", "chat:eng:thread-2"),
    Message("example-3", "dana", "Nightly is red now. And from now on, please link the CI run in every status "
            "update.", "chat:eng:thread-3"),
]


def database_url() -> str:
    """``DATABASE_URL`` when set, else the embedded server's ``crewlet_example`` database, recreated empty."""
    if os.environ.get("DATABASE_URL"):
        return os.environ["DATABASE_URL"]
    from crewlet import embedded_db

    server = embedded_db.server(embedded_db.default_datadir())
    embedded_db.ensure_database(server, "crewlet_example", recreate=True)
    return embedded_db.database_url(server, "crewlet_example")


def service_env(var: Path, url: str) -> dict:
    return {**os.environ, "DATABASE_URL": url, "CREWLET_VAR_DIR": str(var),
            "CREWLET_CONFIG": str(HERE / "service.toml"), "CREWLET_Q_SYNC": "1", "CREWLET_LOG_LEVEL": "WARNING",
            "DJANGO_DEBUG": "0", "DJANGO_SECURE_SSL_REDIRECT": "0"}


def manage(env: dict, *args: str) -> str:
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"manage.py {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout.strip()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_service(env: dict, port: int, log: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "crewlet.wsgi", "--bind", f"127.0.0.1:{port}",
                             "--workers", "1", "--threads", "4", "--log-level", "warning"], cwd=ROOT, env=env,
                            stdout=log.open("w"), stderr=subprocess.STDOUT)
    for _ in range(300):
        try:
            if httpx2.get(f"http://127.0.0.1:{port}/api/v1/openapi.json", timeout=1).status_code == 200:
                return proc
        except httpx2.HTTPError:
            pass
        if proc.poll() is not None:
            sys.exit(f"the service exited while starting; see {log}")
        time.sleep(0.1)
    proc.terminate()
    sys.exit("the service did not answer within 30 s")


def main(var: Path | None = None) -> int:
    var = var or ROOT / "var" / "example"
    var.mkdir(parents=True, exist_ok=True)
    url = database_url()
    print(f"database: {url}")
    env = service_env(var, url)
    manage(env, "migrate", "--verbosity", "0")
    manage(env, "apply_config", str(HERE / "service.toml"))
    token = manage(env, "create_seat_token", "ana", "--label", "example agent")
    port = free_port()
    service = start_service(env, port, var / "service.log")
    print(f"service: http://127.0.0.1:{port} (log {var / 'service.log'}); model: scripted, local")
    try:
        with ScriptedModel() as model, CrewletClient(f"http://127.0.0.1:{port}", token=token, seat="ana") as crewlet:
            llm = openai.OpenAI(base_url=model.base_url, api_key="no-key-needed", max_retries=0)
            for message in TURNS:
                log = run_turn(llm=llm, model="scripted", crewlet=crewlet, message=message)
                memory = crewlet.memory()
                print(f"turn {log.run_id}: {message.sender}: {message.body}")
                print(f"  offered skills: {', '.join(log.offered_skills) or '(none)'}")
                print(f"  tools called:   {', '.join(log.tools_called)}")
                print(f"  answer:         {log.answer}")
                print(f"  POST /turns:    {log.turn_status}")
                reflection = memory.latest_reflection or {}
                print(f"  reflected:      turn {reflection.get('turn_id')}; memory now holds "
                      f"{memory.diary.total} note(s), {memory.episodes.total} episode(s), "
                      f"{memory.skills.total} skill(s)")
            skills = [f"{s['name']} (used {s['use_count']}x)" for s in crewlet.memory().skills.items]
            notes = [n["content"] for n in crewlet.memory().diary.items]
            print(f"skills learned: {', '.join(skills) or '(none)'}")
            print(f"notes: {' | '.join(notes) or '(none)'}")
    finally:
        service.terminate()
        service.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else None))
