"""A real model behind every auxiliary role: what the service learns from real turns through it.

Usage: python bench/real_model.py URL [--model NAME] [--turns 20] [--context-tokens 2048] [--data DIR]

URL is any OpenAI-compatible endpoint (``http://127.0.0.1:8080/v1`` for ``llama-server``). Against a
throwaway embedded PostgreSQL, the config names one ``openai_compat`` provider at URL as every role's
auxiliary chain; N real turns from the bench data (tau-bench runs: a customer's messages and the
agent's tool run; LoCoMo chats: one speaker's messages to the agent) go through the service as a
runtime sends them: ``POST /agents/{seat}/prefetch`` at turn start, then ``POST /turns``, each
reflected as it arrives (the queue runs in-process). Printed: per purpose, the model's requests
answered, rejected (by reason) and otherwise failed (each one fell through to the offline answer),
and what was stored; then every stored memory, for reading.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict
from urllib.parse import urlsplit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "bench-data")
SEAT = "ana"

CONFIG = """
[company]
name = "Bench"
token_budget = 0

[providers.llm.model]
kind = "openai_compat"
base_url = "{url}"
model = "{model}"
context_tokens = {context}
timeout_seconds = {timeout}
max_retries = 0

[providers.embeddings]
kind = "hashing"
model = "hashing-256"
dimensions = 256

[learning.skill_synthesis]
min_tool_calls = 3

[units.desk]
name = "Desk"

[roles.agent]
llm = ["model"]
llm_auxiliary = ["model"]
tools = ["query_episodes", "reflect_and_persist", "refresh_memory", "use_skill"]

[seats.{seat}]
role = "agent"
unit = "desk"
"""


def tau_turns(records: list[dict], limit: int) -> list[dict]:
    """One turn a run: the customer's messages, the agent's tool run, its last reply."""
    turns: list[dict] = []
    for record in records[:limit]:
        traj = record["traj"]
        said = [m["content"] for m in traj if m.get("role") == "user" and m.get("content")][:4]
        tools = [c["function"]["name"] for m in traj for c in (m.get("tool_calls") or [])]
        replies = [m["content"] for m in traj if m.get("role") == "assistant" and m.get("content")]
        if not said:
            continue
        turns.append({"sender": "customer", "said": said, "tools": tools or ["reply"],
                      "did": (replies[-1] if replies else "Answered the customer.")[:600],
                      "outcome": "done" if record.get("reward", 1) else "failed"})
    return turns


def locomo_turns(records: list[dict], limit: int) -> list[dict]:
    """One turn a session: the first speaker's messages in it, sent to the agent."""
    turns: list[dict] = []
    for record in records:
        conv = record["conversation"]
        speaker = conv["speaker_a"]
        n = 1
        while f"session_{n}" in conv and len(turns) < limit:
            said = [m["text"] for m in conv[f"session_{n}"] if m["speaker"] == speaker][:4]
            if said:
                turns.append({"sender": speaker, "said": said, "tools": ["chat_reply"],
                              "did": "Replied in the chat.", "outcome": "done"})
            n += 1
        if len(turns) >= limit:
            break
    return turns


def record_of(turn: dict, n: int, ask: str) -> dict:
    handle = "".join(ch for ch in turn["sender"].lower() if ch.isalnum()) or "someone"
    return {
        "run_id": f"real-{n}", "work_key": f"chat:msg-{n}", "seat": SEAT, "conversation_id": f"chat:{handle}:{n}",
        "conversation_kind": "chat", "label": "Direct Message", "subject_is_label": True, "ask": ask,
        "plan_summary": turn["did"], "tool_sequence": turn["tools"], "tools_called": turn["tools"],
        "review_outcome": turn["outcome"], "skills_offered": [],
        "interactions": [{"sender": {"handle": handle, "platform": "chat", "display_name": turn["sender"],
                                     "kind": "human"}, "body": body} for body in turn["said"]],
    }


def drive(url: str, model: str, turns_wanted: int, context: int, data: str) -> int:
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client

    from bench.bench_data import found
    from core.models import Event
    from learning.models import CounterpartyProfile, DiaryEntry, SynthesizedSkill

    call_command("migrate", verbosity=0)
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(CONFIG.format(url=url, model=model, context=context, timeout=60.0, seat=SEAT))
    call_command("apply_config", f.name, verbosity=0)
    from io import StringIO

    out = StringIO()
    call_command("create_seat_token", SEAT, stdout=out)
    token = out.getvalue().strip().split()[-1]
    sets = found(data)
    half = max(1, turns_wanted // 2)
    turns = tau_turns(sets["tau"][0][1], half) if sets["tau"] else []
    turns += locomo_turns(sets["locomo"][0][1], turns_wanted - len(turns)) if sets["locomo"] else []
    client = Client()
    auth = {"Authorization": f"Bearer {token}"}
    started = time.monotonic()
    statuses: Counter = Counter()
    prefetch_ms: list[float] = []
    for n, turn in enumerate(turns, start=1):
        ask = turn["said"][0]
        t0 = time.monotonic()
        answer = client.post(f"/api/v1/agents/{SEAT}/prefetch", json.dumps({"run_id": f"real-{n}", "ask": ask}),
                             content_type="application/json", headers=auth)
        prefetch_ms.append((time.monotonic() - t0) * 1000)
        statuses[f"prefetch {answer.status_code}"] += 1
        answer = client.post("/api/v1/turns", json.dumps(record_of(turn, n, ask)), content_type="application/json",
                             headers=auth)
        statuses[f"turns {answer.status_code}"] += 1
    took = time.monotonic() - started
    report(turns, statuses, prefetch_ms, took, Event, DiaryEntry, CounterpartyProfile, SynthesizedSkill)
    return 0


def report(turns, statuses, prefetch_ms, took, Event, DiaryEntry, CounterpartyProfile, SynthesizedSkill) -> None:
    spend = [e.payload for e in Event.objects.filter(name="auxiliary_spend").order_by("id")]
    by_purpose: dict[str, Counter] = defaultdict(Counter)
    reasons: dict[str, Counter] = defaultdict(Counter)
    for row in spend:
        by_purpose[row["purpose"]][row["outcome"]] += 1
        if row["outcome"] != "answered":
            reasons[row["purpose"]][_reason(row)] += 1
    prefetch_ms.sort()
    print(f"{len(turns)} turns in {took:.0f} s; {dict(statuses)}; {len(spend)} model requests recorded")
    if prefetch_ms:
        print(f"prefetch p50 {prefetch_ms[len(prefetch_ms) // 2]:.0f} ms, max {prefetch_ms[-1]:.0f} ms")
    fallbacks: Counter = Counter()
    for event in Event.objects.filter(name="prefetch_summary"):
        fallbacks.update(f"{p} {why}" for p, why in (event.payload.get("model_fallbacks") or {}).items())
    print(f"turn start answered offline: {dict(fallbacks) or 'never'}")
    workers: dict[str, Counter] = defaultdict(Counter)
    for event in Event.objects.filter(name="reflection_completed"):
        for name, outcome in (event.payload.get("workers") or {}).items():
            result = outcome.get("result") or {}
            workers[name][result.get("answered_by") or outcome.get("status")] += 1
    print("\nper purpose: model requests answered / rejected / other failures (each fell through to offline)")
    for purpose in sorted(by_purpose):
        counts = by_purpose[purpose]
        failed = sum(v for k, v in counts.items() if k not in ("answered", "rejected"))
        print(f"  {purpose:<24} answered {counts['answered']:>3}  rejected {counts['rejected']:>3}  failed {failed:>3}")
        for why, n in reasons[purpose].most_common(6):
            print(f"      {n:>3} x {why}")
    print("\nreflection workers, by who produced what they acted on:")
    for name in sorted(workers):
        print(f"  {name:<20} {dict(workers[name])}")
    notes = list(DiaryEntry.objects.order_by("id"))
    profiles = list(CounterpartyProfile.objects.order_by("id"))
    skills = list(SynthesizedSkill.objects.order_by("id"))
    print(f"\nstored: {len(notes)} notes, {len(profiles)} profiles, {len(skills)} skills")
    for entry in notes:
        print(f"  note [{entry.kind}] {entry.content}")
    for profile in profiles:
        print(f"  profile {profile.subject_handle}: style {profile.communication_style!r}; "
              f"decisions {profile.past_decisions}; sensitivities {profile.sensitivities}; topics {profile.topics}")
    for skill in skills:
        print(f"  skill {skill.name}: {skill.description}")
    failures = held_against_checks(notes, profiles, skills)
    print(f"\nstored memories an answer check rejects: {len(failures)} of {len(notes) + len(profiles) + len(skills)}")
    for line in failures:
        print(f"  {line}")


def held_against_checks(notes, profiles, skills) -> list[str]:
    """What was stored, held against the checks that need no turn: the prompts' template text, a text
    that says nothing, a note stored twice for one seat, a skill named for a seat."""
    from core import answers, purposes
    from crewlet.models import Seat

    blanks: set[str] = set()
    for purpose in purposes.all_purposes().values():
        try:
            blanks |= answers.template_blanks(purpose.render(purpose.read_inputs({})))
        except purposes.InvalidInputs:  # rendered only with inputs; the persist, profile and skill prompts need none
            continue
    blanks.discard("")
    frozen = frozenset(blanks)
    failures: list[str] = []

    def held(what: str, text: str) -> None:
        blank = answers.blank_in(text, frozen)
        if blank or not text.strip() or purposes.says_nothing(text):
            failures.append(f"{what}: {text!r} ({'template text ' + repr(blank) if blank else 'says nothing'})")

    seen: set[tuple[int, str]] = set()
    for entry in notes:
        held(f"note {entry.pk}", entry.content)
        key = (entry.seat_id, answers.normalised(entry.content))
        if key in seen:
            failures.append(f"note {entry.pk}: {entry.content!r} (stored twice for its seat)")
        seen.add(key)
    for profile in profiles:
        value = {"style": profile.communication_style, "decisions": profile.past_decisions,
                 "sensitivities": profile.sensitivities, "topics": profile.topics}
        for where, text in answers.string_leaves(value):
            if text:
                held(f"profile {profile.subject_handle} {where}", text)
    handles = {answers.normalised(h) for h in Seat.objects.values_list("handle", flat=True)}
    for skill in skills:
        held(f"skill {skill.pk} name", skill.name)
        held(f"skill {skill.pk} description", skill.description)
        if answers.normalised(skill.name) in handles:
            failures.append(f"skill {skill.pk}: named {skill.name!r}, a seat's handle")
    return failures


def _reason(row: dict) -> str:
    """The reason without what varies from one answer to the next (the quoted text)."""
    reason = row.get("reason") or row["outcome"]
    head = reason.split(" '")[0].split(' "')[0]
    return f"{row['outcome']}: {head[:110]}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--model", default="local")
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--context-tokens", type=int, default=2048)
    parser.add_argument("--data", default=DATA)
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inner:
        return drive(args.url, args.model, args.turns, args.context_tokens, args.data)
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from fresh_db import run_fresh

    host = urlsplit(args.url).hostname or ""
    return run_fresh([os.path.abspath(__file__), *argv, "--inner"], CREWLET_Q_SYNC="1", DJANGO_DEBUG="0",
                     DJANGO_SECURE_SSL_REDIRECT="0", CREWLET_ALLOWED_PROVIDER_HOSTS=host, PYTHONPATH=ROOT,
                     CREWLET_LOG_LEVEL=os.environ.get("CREWLET_LOG_LEVEL", "WARNING"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
