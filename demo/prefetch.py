"""Demo step: turn start for ana — one rich-trigger and one thin-trigger prefetch, printed as the
agent would see them, then a ``query_episodes`` call. Runs after the reflection step has written
memory for ana, bo and cy; with little or no memory it still shows what each block says.
"""

from __future__ import annotations

import json
import uuid

from django.test import Client

SEAT = "ana"

RICH = {
    "ask": "PLAT-88: Payments webhook retries double-charge\nRavi: The staging repro is done and confirms the "
    "double charge on retried webhooks. Please prepare the fix and open a PR for review.",
    "requires_recon": False,
    "conversation_id": "jira:PLAT-88",
    "conversation_kind": "tracker",
    "interactions": [{"sender": {"handle": "ravi", "platform": "jira", "display_name": "Ravi"},
                      "body": "The staging repro is done and confirms the double charge on retried webhooks. "
                              "Please prepare the fix and open a PR for review."}],
}

THIN = {
    "ask": "+1",
    "requires_recon": True,  # a chat thread reply: the builder said "read the thread"
    "conversation_id": "mattermost:town-square:thread-5510",
    "conversation_kind": "chat",
    "interactions": [{"sender": {"handle": "maya", "platform": "mattermost", "display_name": "Maya"}, "body": "+1"}],
    "thread": {"status": "read", "messages": [
        {"sender_name": "Maya", "sender_handle": "maya",
         "text": "Heads up: I'm on vacation next week. Ravi approves payments releases while I'm out."},
        {"sender_name": "Ana", "sender_handle": "ana", "is_self": True,
         "text": "Noted: I'll route payments release approvals to Ravi until you're back."},
        {"sender_name": "Maya", "sender_handle": "maya", "text": "+1"},
    ]},
}


def _token(ctx) -> str:
    from crewlet.models import ApiToken, Seat

    if SEAT not in ctx.tokens:
        seat = Seat.objects.get(handle=SEAT)
        _row, ctx.tokens[SEAT] = ApiToken.issue(company=seat.company, seat=seat, label="demo")
    return ctx.tokens[SEAT]


def _post(client: Client, token: str, path: str, body: dict) -> dict:
    response = client.post(f"/api/v1{path}", json.dumps(body), content_type="application/json", secure=True,
                           HTTP_AUTHORIZATION=f"Bearer {token}")
    if response.status_code != 200:
        raise RuntimeError(f"{path} answered {response.status_code}: {response.content[:300]!r}")
    return response.json()


def _show(ctx, title: str, answer: dict, *, guidance: bool = True) -> None:
    ctx.heading(title)
    blocks = "\n\n".join(b["text"] for b in answer["blocks"] if b["text"])
    ctx.line(blocks or "(no block had anything to say)")
    if answer["guidance"]:
        ctx.line("")
        ctx.line(answer["guidance"] if guidance else f"(tool guidance as above: {', '.join(answer['guidance_keys'])})")
    summary = answer["summary"]
    ctx.line("")
    ctx.line(f"   {summary['summary']} · turn_embedding={summary['turn_embedding']} · "
             f"trigger_requires_recon={summary['trigger_requires_recon']}")
    ctx.line("   blocks: " + ", ".join(f"{name}={'hit' if b['hit'] else '-'}({b['bytes']}B)"
                                      for name, b in summary["blocks"].items()))


def run(ctx) -> None:
    from crewlet.models import Seat

    if not Seat.objects.filter(handle=SEAT).exists():
        ctx.heading("Turn start: skipped (no seat named ana in the applied config)")
        return
    client, token = Client(), _token(ctx)
    rich = _post(client, token, f"/agents/{SEAT}/prefetch", {"run_id": f"demo-rich-{uuid.uuid4().hex[:8]}", **RICH})
    _show(ctx, "Turn start for ana, a rich trigger (a tracker comment that carries the whole ask)", rich)
    again = _post(client, token, f"/agents/{SEAT}/prefetch", {"run_id": rich["run_id"], **RICH})
    ctx.line(f"   the same run id again: frozen={again['frozen']}, identical prefix={again['prompt'] == rich['prompt']}")
    thin = _post(client, token, f"/agents/{SEAT}/prefetch", {"run_id": f"demo-thin-{uuid.uuid4().hex[:8]}", **THIN})
    _show(ctx, "Turn start for ana, a thin trigger (\"+1\" in a thread: the relevance blocks are gated)", thin,
          guidance=False)
    ctx.heading("Mid-turn: query_episodes(query=\"webhook retries double charge\")")
    answer = _post(client, token, f"/agents/{SEAT}/tools/query_episodes",
                   {"run_id": rich["run_id"], "arguments": {"query": "webhook retries double charge", "limit": 3}})
    ctx.line(answer["text"])
    ctx.line(f"   turn ids: {[hit['turn_id'] for hit in answer['data'].get('hits', [])]}")
