"""An MCP client (the official ``mcp`` SDK) starting ``manage.py mcp --seat ana`` over stdio, as Claude
Code or an IDE would: it lists the tools, starts a turn with ``prefetch`` and asks ``query_episodes``.

Run it right after ``make demo``:  .venv/bin/python examples/mcp/check.py ["a query"]
It acts as ana with the token from var/demo-tokens.txt (or CREWLET_TOKEN) on the demo's database
(or DATABASE_URL), with the example config (or CREWLET_CONFIG).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[2]
SEAT = "ana"


def demo_token(seat: str) -> str:
    path = ROOT / "var" / "demo-tokens.txt"
    for line in path.read_text().splitlines() if path.exists() else []:
        parts = line.split()
        if len(parts) == 2 and parts[0] == seat:
            return parts[1]
    sys.exit(f"no token for {seat} in {path}: run `make demo` first, or set CREWLET_TOKEN")


def server_env() -> dict:
    env = dict(os.environ)
    if not env.get("CREWLET_TOKEN"):
        env["CREWLET_TOKEN"] = demo_token(SEAT)
    env.setdefault("CREWLET_CONFIG", str(ROOT / "crewlet.toml.example"))
    env.setdefault("CREWLET_LOG_LEVEL", "WARNING")
    if not env.get("DATABASE_URL"):
        env["DATABASE_URL"] = subprocess.run([sys.executable, "-m", "crewlet.embedded_db", "url", "crewlet_demo"],
                                             cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    return env


async def main(query: str) -> None:
    params = StdioServerParameters(command=sys.executable, args=["manage.py", "mcp", "--seat", SEAT],
                                   env=server_env(), cwd=str(ROOT))
    async with Client(params, read_timeout_seconds=60) as client:
        listed = await client.list_tools()
        print("tools/list:", ", ".join(t.name for t in listed.tools))
        started = await client.call_tool("prefetch", {"ask": query})
        print(f"prefetch (run_id {started.structured_content['run_id']}):")
        print("  " + started.content[0].text.split("\n\n")[0].replace("\n", "\n  "))
        found = await client.call_tool("query_episodes", {"query": query})
        print("query_episodes:")
        print("  " + found.content[0].text.replace("\n", "\n  "))


if __name__ == "__main__":
    anyio.run(main, " ".join(sys.argv[1:]) or "webhook retries double charge")
