"""Demo step: fixture turns for ana, bo and cy through ``POST /api/v1/turns``, then what each seat learned.

Turns marked ``"turn_start": "prefetch"`` start with the prefetch, as a runtime's do, and name no skills of their
own: POST /turns takes the ones the prefetch offered. The queue runs synchronously for the step
(django-q2's sync mode), so each 202 has reflected by
the time the next turn is posted, in the order a seat's turns happened.
"""

from __future__ import annotations

import json
import logging
import re
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.test import Client
from django.utils import timezone

from learning.review.pages import gates

FIXTURES = Path(settings.BASE_DIR) / "fixtures" / "turns"
SEATS = ("ana", "bo", "cy")
PLACEHOLDER = re.compile(r"\{(date|now)([+-]\d+)(m?)\}")


@contextmanager
def synchronous_queue():
    from django_q.conf import Conf

    previous, Conf.SYNC = Conf.SYNC, True
    try:
        yield
    finally:
        Conf.SYNC = previous


def _fill(value, now):
    """Placeholders keep the fixture's dates relative to the day the demo runs."""
    if isinstance(value, dict):
        return {k: _fill(v, now) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, now) for v in value]
    if not isinstance(value, str):
        return value

    def sub(m):
        n = int(m.group(2))
        if m.group(1) == "date":
            return (now + timedelta(days=n)).date().isoformat()
        return (now + timedelta(minutes=n)).isoformat()

    return PLACEHOLDER.sub(sub, value)


TRIGGER_FIELDS = ("label", "subject_is_label", "interactions", "conversation_id", "conversation_kind")


def _start_turn(client, token: str, record: dict) -> dict:
    """Every fixture turn starts as a runtime's turn does, with the prefetch, so a lead can read what
    each was shown. One marked ``"turn_start": "prefetch"`` names no skills in its record (POST /turns
    takes the ones the prefetch offered)."""
    record = dict(record)
    record.pop("turn_start", None)
    if record.get("run_id"):
        body = {"run_id": record["run_id"], **{k: record[k] for k in TRIGGER_FIELDS if k in record}}
        client.post(f"/api/v1/agents/{record['seat']}/prefetch", json.dumps(body), content_type="application/json", secure=True,
                    HTTP_AUTHORIZATION=f"Bearer {token}")
    return record


def load_fixtures(now=None) -> list[dict]:
    now = now or timezone.now()
    records = []
    for path in sorted(FIXTURES.glob("*.json")):
        records.extend(_fill(json.loads(path.read_text(encoding="utf-8")), now))
    return records


def _tokens(ctx) -> dict[str, str]:
    from crewlet import config
    from crewlet.models import ApiToken, Seat

    config.current()  # applies the configured file (crewlet.toml.example in `make demo`) when it changed
    for handle in SEATS:
        if handle not in ctx.tokens:
            seat = Seat.objects.get(handle=handle)
            _token, raw = ApiToken.issue(company=seat.company, seat=seat, label="demo")
            ctx.tokens[handle] = raw
    return ctx.tokens


def post_all(ctx, records: list[dict]) -> dict:
    client, tokens, answers = Client(), _tokens(ctx), {}
    with synchronous_queue():
        for record in records:
            record = _start_turn(client, tokens[record["seat"]], record)
            response = client.post(
                "/api/v1/turns", json.dumps(record), content_type="application/json", secure=True,
                HTTP_AUTHORIZATION=f"Bearer {tokens[record['seat']]}",
            )
            answers[record["run_id"]] = response.status_code
        repeat = {k: v for k, v in records[0].items() if k != "turn_start"}
        response = client.post(
            "/api/v1/turns", json.dumps(repeat), content_type="application/json", secure=True,
            HTTP_AUTHORIZATION=f"Bearer {tokens[repeat['seat']]}",
        )
        answers["repeat of " + repeat["run_id"]] = response.status_code
    return answers


def _wrote(name: str, result: dict) -> str | None:
    if name == "persist_decider":
        return f"decided {result.get('classification')}"
    if name == "profiler":
        return f"profiled {', '.join(result.get('subjects', []))}"
    if name == "synthesizer":
        return f"drafted {result['name']}" if result.get("drafted") else f"no draft ({result.get('why')})"
    if name == "refiner":
        return f"refined {result['name']} to v{result['version']}" if result.get("refined") else f"refiner {result.get('why')}"
    if name == "skill_reflection":
        done = [f"{a['action']} {a['name']} ({a['status']})" for a in result.get("actions", [])]
        return "skill reflection: " + (", ".join(done) if done else "nothing worth keeping")
    return None


def _closed_gates(event) -> str:
    """What the reflection wrote, then each step that had nothing to do, in plain words."""
    if event.gate:
        return f"nothing learned: {gates.why(event.gate)}"
    walked = event.walked()
    skipped = [
        f"{gates.worker_name(name)}: {gates.why(r.gate)}" if r.status == "skipped" else f"{name} FAILED ({r.error})"
        for name, r in walked
        if r.status != "ran"
    ]
    wrote = [w for name, r in walked if r.status == "ran" for w in [_wrote(name, r.result)] if w]
    return "; ".join(wrote) + ("\n      skipped: " + "; ".join(skipped) if skipped else "")


def show_seat(ctx, handle: str) -> None:
    from core import events
    from crewlet.models import Seat
    from learning.events import ReflectionCompleted
    from learning.models import CounterpartyProfile, DiaryEntry, Episode, SynthesizedSkill

    ctx.line(f"\n-- {handle}")
    seat = Seat.objects.get(handle=handle)
    for found in reversed(list(events.recorded(ReflectionCompleted, seat=seat))):
        ctx.line(f"   turn {found.event.run_id}: {_closed_gates(found.event)}")
    for note in DiaryEntry.objects.filter(seat__handle=handle).order_by("id"):
        ttl = f" (until {note.ttl_until:%Y-%m-%d})" if note.ttl_until else ""
        ctx.line(f"   note [{note.kind}{ttl}] {note.content}")
    for ep in Episode.objects.filter(seat__handle=handle).order_by("started_at", "id"):
        vec = "vector" if ep.embedding is not None else "no vector yet"
        ctx.line(f"   episode [{ep.review_outcome}, {len(ep.tool_sequence)} tools, {vec}] {ep.task_summary}")
    for p in CounterpartyProfile.objects.filter(observer__handle=handle).order_by("subject_handle"):
        said = " ".join([p.communication_style, "; ".join(p.sensitivities[:1] + p.past_decisions[:1])]).strip()
        ctx.line(f"   profile {p.subject_handle or p.subject_external_id}@{p.subject_platform}: {said}")
    for s in SynthesizedSkill.objects.filter(seat__handle=handle).order_by("id"):
        ctx.line(f"   skill {s.name} v{s.version} [{s.trigger}, {s.state}]: {s.description}")
        for line in s.body.splitlines():
            if line.startswith("- ") and ("Observed in practice" in line or "Counter-example" in line or "corrected" in line):
                ctx.line(f"      {line}")


def run(ctx) -> None:
    ctx.heading("Reflection: fixture turns through POST /api/v1/turns, reflected by the queue")
    records = load_fixtures(ctx.clock)
    q_log = logging.getLogger("django-q")
    level, q_log.level = q_log.level, logging.WARNING  # the sync queue logs every task's lifecycle
    try:
        answers = post_all(ctx, records)
    finally:
        q_log.setLevel(level)
    counts = {code: sum(1 for c in answers.values() if c == code) for code in sorted(set(answers.values()))}
    ctx.line(f"   posted {len(answers)} record(s): " + ", ".join(f"{n} answered {code}" for code, n in counts.items()))
    for handle in SEATS:
        show_seat(ctx, handle)
