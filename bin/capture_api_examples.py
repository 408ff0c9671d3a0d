#!/usr/bin/env python
"""Capture real request and response bodies for every API route into docs/api-examples.json.

Runs on a copy (``crewlet_capture``) of the demo's database ``crewlet_demo`` on the embedded
PostgreSQL (``make demo`` first; stop ``make serve`` meanwhile: a database being copied has no
sessions): the example agent's three turns
(prefetch, tool calls, POST /turns, memory) through ``crewlet_client``, then the remaining
routes (whoami, the tool formats, the operator overview, the transcript ladder's verdicts and a
recommendation's review and install). ``crewlet.api`` puts the captured bodies into the OpenAPI
schema as each route's examples; docs/integration.md quotes them.

    python bin/capture_api_examples.py
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "docs" / "api-examples.json"
GUIDE = ROOT / "docs" / "integration.md"
BODY = re.compile(r"(<!-- body: (\S+) (\S+) (request|response) -->\n).*?(<!-- /body -->)", re.S)


def main() -> int:
    from crewlet import embedded_db

    var = Path(os.environ.get("CREWLET_VAR_DIR", ROOT / "var"))  # make demo's: its server and its tokens
    server = embedded_db.server(var / "pgdata")
    if not embedded_db.database_exists(server, "crewlet_demo"):
        sys.exit("no demo database crewlet_demo on the embedded server: run `make demo` first")
    embedded_db.ensure_database(server, "crewlet_capture", recreate=True, template="crewlet_demo")
    work = Path(tempfile.mkdtemp(prefix="crewlet-capture-"))
    os.environ.update(DATABASE_URL=embedded_db.database_url(server, "crewlet_capture"), CREWLET_VAR_DIR=str(work),
                      CREWLET_CONFIG=str(ROOT / "crewlet.toml.example"), DJANGO_SETTINGS_MODULE="crewlet.settings",
                      CREWLET_LOG_LEVEL="WARNING", DJANGO_SECURE_SSL_REDIRECT="0")
    import django

    django.setup()
    from django_q.conf import Conf

    Conf.SYNC = True  # each turn is reflected before POST /turns answers
    captured = capture(tokens_from(var / "demo-tokens.txt"))
    OUT.write_text(json.dumps(captured, indent=2, sort_keys=True, default=str) + "\n")
    print(f"{len(captured)} routes captured into {OUT.relative_to(ROOT)}")
    GUIDE.write_text(fill_guide(GUIDE.read_text(), captured))
    print(f"bodies quoted in {GUIDE.relative_to(ROOT)}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


def fill_guide(text: str, captured: dict) -> str:
    """Each ``<!-- body: METHOD PATH request|response -->`` block of the guide, with the captured body."""

    def block(match):
        key, side = f"{match.group(2)} {match.group(3)}", match.group(4)
        exchange = captured.get(key)
        if exchange is None:
            return match.group(0)
        head = f"{key}" + (f"?{'&'.join(f'{k}={v}' for k, v in exchange['query'].items())}" if exchange.get("query")
                           else "")
        label = head if side == "request" else f"{exchange['status']}"
        body = exchange["request"] if side == "request" else exchange["response"]
        return (f"{match.group(1)}```http\n{label}\n```\n```json\n{json.dumps(body, indent=2, default=str)}\n```\n"
                f"{match.group(5)}")

    return BODY.sub(block, text)


def tokens_from(path: Path) -> dict[str, str]:
    if not path.exists():
        sys.exit(f"no {path}: run `make demo` first")
    pairs = (line.split() for line in path.read_text().splitlines() if line and not line.startswith("#"))
    return {name: token for name, token in pairs}


class Recorder:
    """An httpx2 transport over the Django app that keeps the first exchange of each route."""

    def __init__(self):
        import httpx2
        from django.core.handlers.wsgi import WSGIHandler

        from crewlet.api import api

        self.inner = httpx2.WSGITransport(app=WSGIHandler())
        self.routes = [(method.upper(), path, re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", path) + "$"))
                       for path, ops in api.get_openapi_schema()["paths"].items() for method in ops]
        self.captured: dict[str, dict] = {}

    def handle_request(self, request):
        response = self.inner.handle_request(request)
        response.read()
        key = next((f"{m} {p}" for m, p, rx in self.routes if m == request.method and rx.match(request.url.path)),
                   None)
        if key and key not in self.captured and response.status_code < 400:
            body = json.loads(request.content) if request.content else None
            self.captured[key] = {"request": body, "status": response.status_code, "response": response.json(),
                                  "query": dict(request.url.params) or None}
        return response

    def close(self):
        self.inner.close()


def capture(tokens: dict[str, str]) -> dict:
    import openai

    from crewlet_client import CrewletClient
    from examples.agent_loop.agent import run_turn
    from examples.agent_loop.run import TURNS
    from examples.agent_loop.scripted_model import ScriptedModel

    recorder = Recorder()
    url = "http://127.0.0.1:8000"
    ana = CrewletClient(url, token=tokens["ana"], seat="ana", transport=recorder)
    with ScriptedModel() as model:
        llm = openai.OpenAI(base_url=model.base_url, api_key="none", max_retries=0)
        for message in TURNS:
            run_turn(llm=llm, model="scripted", crewlet=ana, message=message)
    ana.memory(limit=2)
    ana._call("GET", "/agents/ana/whoami")
    operator = CrewletClient(url, token=tokens["operator"], seat="ana", transport=recorder)
    operator._call("GET", "/memory/overview")
    transcripts(ana, operator)
    return recorder.captured


def fresh_transcripts(handle: str) -> None:
    """The fixture sessions ingested afresh for ``handle`` (``learning.transcripts.ingest``, as ``make demo`` does),
    after the demo's own transcript rows are removed from this copy: the demo's run ends with every shard decided
    and every recommendation installed, which leaves the transcript routes nothing to act on."""
    from crewlet.models import Seat
    from demo.transcripts import FIXTURES
    from learning.transcripts.ingest import ingest
    from learning.transcripts.models import (
        Draft,
        Recommendation,
        Shard,
        TranscriptEpisode,
        TranscriptSession,
        TranscriptSource,
    )

    for model in (Recommendation, Draft, Shard, TranscriptEpisode, TranscriptSession, TranscriptSource):
        model.objects.all().delete()
    work = Path(tempfile.mkdtemp(prefix="crewlet-capture-sessions-"))
    sessions, repo = work / "sessions", work / "repo"
    sessions.mkdir()
    repo.mkdir()
    (repo / "CLAUDE.md").write_text("# Acme API\n\n## Rules\n\n- Use `ruff` for linting.\n")
    for path in sorted(FIXTURES.glob("*.jsonl")):
        shutil.copy(path, sessions / path.name)
    ingest(paths=[str(sessions)], seat=Seat.objects.get(handle=handle), repo=str(repo))


def transcripts(seat_client, operator) -> None:
    """A shard published and one rejected (the seat's own), a recommendation reviewed and installed."""
    from learning.transcripts.models import Recommendation, Shard

    fresh_transcripts("ana")

    mine = Shard.objects.filter(seat__handle="ana").order_by("id")
    candidate = mine.filter(status__in=Shard.OPEN).first()
    submitted = mine.filter(status=Shard.PUBLISHED).first() or candidate
    if submitted is not None:
        seat_client._call("POST", f"/transcripts/shards/{submitted.pk}/publish")
    if candidate is not None:
        seat_client._call("POST", f"/transcripts/shards/{candidate.pk}/reject")
    rec = Recommendation.objects.filter(mode=Recommendation.CREATE, status=Recommendation.PROPOSED).first()
    if rec is not None:
        # install into a copy of the repository, never into the demo's own
        copy = Path(tempfile.mkdtemp(prefix="crewlet-capture-repo-")) / "repo"
        shutil.copytree(rec.repo_root, copy)
        Recommendation.objects.filter(pk=rec.pk).update(repo_root=str(copy))
        operator._call("POST", f"/transcripts/recommendations/{rec.pk}/review", json={"approve": True})
        operator._call("POST", f"/transcripts/recommendations/{rec.pk}/install")


if __name__ == "__main__":
    sys.exit(main())
