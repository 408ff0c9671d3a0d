"""Secrets planted through the API never reach a table: one scrubber (``core.scrub``) runs on every
write path, before a model sees the text and before it is stored.

Each kind is planted through a turn start (the ask), a ``reflect_and_persist`` note, a tool's hint and
a turn record (its ask, its account, a message); the turn is reflected; then every row of every table
is read back as text and searched for each secret's value.
"""

from __future__ import annotations

import pytest
from django.db import connection

from learning.models import DiaryEntry, Episode, PrefetchSnapshot, Turn
from tests.learning.reflection.conftest import human, record

# made-up values of every kind the scrubber knows as a secret; the second item is what must not be found
SECRETS = {
    "aws-access-key": ("AKIAZ3MKQW7EXAMPLE12", "AKIAZ3MKQW7EXAMPLE12"),
    "aws-secret-key": ("q8Vn2LmX4pR7sT1uW3yZ5aB6cD9eF0gH2jK4lM6n", "q8Vn2LmX4pR7sT1uW3yZ5aB6cD9eF0gH2jK4lM6n"),
    "github-token": ("ghp_Zr8w2Qk5Lm9Tn3Vx7Bc1Df4Gh6Jk0Ps2Ru5Wy", "Zr8w2Qk5Lm9Tn3Vx7Bc1Df4Gh6Jk0Ps2Ru5Wy"),
    "stripe-key": ("sk_live_9Rt2Vx7Lq4Wm8Nz3Kp6Hs1Yd", "9Rt2Vx7Lq4Wm8Nz3Kp6Hs1Yd"),
    "openai-key": ("sk-proj-Tq7Yw2Ze9Rb4Uc6Id8Of1Pg3Ah5Sj0Kl", "Tq7Yw2Ze9Rb4Uc6Id8Of1Pg3Ah5Sj0Kl"),
    "jwt": ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJvcHMtYm90In0.Xk3vQ9pLr2sT8wYz1aBc4dEf",
            "eyJzdWIiOiJvcHMtYm90In0"),
    "private-key": ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAq7Zt9Vx2Lm4Pn8Rs1Tu5Wy3\n-----END RSA PRIVATE KEY-----",
                    "MIIEowIBAAKCAQEAq7Zt9Vx2Lm4Pn8Rs1Tu5Wy3"),
    "url-password": ("postgres://admin:Plum7Tart9@db.example.internal:5432/orders", "Plum7Tart9"),
}
PLANTED = "Creds for the rollout: " + " ".join(value for value, _ in SECRETS.values())


@pytest.fixture
def sync_queue(monkeypatch):
    from django_q.conf import Conf

    monkeypatch.setattr(Conf, "SYNC", True)


def every_row_as_text() -> list[tuple[str, str]]:
    """(table, row as lower-case text) for every row of every table of the database (a hint is stored
    case-folded)."""
    found = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            quoted = connection.ops.quote_name(table)
            cursor.execute(f"SELECT t::text FROM {quoted} AS t")
            found += [(table, row[0].lower()) for row in cursor.fetchall()]
    return found


def test_every_kind_of_secret_planted_through_the_api_is_found_in_no_table(
    seat, seat_token, api_client, sync_queue, django_capture_on_commit_callbacks
):
    from learning import tools

    seat.role.tools = list(tools.REGISTRY)
    seat.role.save()
    base = f"/api/v1/agents/{seat.handle}"
    started = api_client.post(f"{base}/prefetch", {"run_id": "run-creds", "ask": PLANTED,
                                                     "interactions": [human(PLANTED)]}, token=seat_token)
    assert started.status_code == 200, started.content
    note = api_client.post(f"{base}/tools/reflect_and_persist", {
        "run_id": "run-creds", "arguments": {"content": PLANTED, "kind": "long"}}, token=seat_token)
    assert note.status_code == 200 and note.json()["ok"], note.content
    hint = api_client.post(f"{base}/tools/refresh_memory", {
        "run_id": "run-creds", "arguments": {"context_hint": PLANTED}}, token=seat_token)
    assert hint.status_code == 200, hint.content
    turn = record(seat, run_id="run-creds", ask=PLANTED, plan_summary=PLANTED, failure_reason="",
                  interactions=[human(PLANTED)], label="Rollout: " + SECRETS["github-token"][0])
    with django_capture_on_commit_callbacks(execute=True):
        posted = api_client.post("/api/v1/turns", turn, token=seat_token)
    assert posted.status_code == 202, posted.content
    memory = api_client.get(f"{base}/memory", token=seat_token)
    again = api_client.post(f"{base}/prefetch", {"run_id": "run-next", "ask": "How did the rollout go?"},
                            token=seat_token)

    # the planted text reached every store it feeds, scrubbed
    assert Turn.objects.get(run_id="run-creds").reflected_at is not None
    stored_note = DiaryEntry.objects.get(seat=seat, turn_id="run-creds").content
    assert "[REDACTED:github-token]" in stored_note and "[REDACTED:private-key]" in stored_note
    assert "[REDACTED:stripe-key]" in Episode.objects.get(seat=seat, run_id="run-creds").ask
    assert "[REDACTED:jwt]" in PrefetchSnapshot.objects.get(seat=seat, run_id="run-creds").rendered["ask"]
    rows = every_row_as_text()
    for kind, (_, value) in SECRETS.items():
        leaks = sorted({table for table, text in rows if value.lower() in text})
        assert not leaks, f"{kind} stored verbatim in {leaks}"
        for answer in (started, note, hint, posted, memory, again):
            assert value not in answer.content.decode(), f"{kind} answered verbatim by {answer.request['PATH_INFO']}"


def test_a_transcript_keeps_its_personal_scrubbing_and_a_live_turn_keeps_its_addresses():
    """One scrubber, two scopes: a transcript's addresses and home paths are a bystander's; a live
    turn's address is the work's own (whom to write to)."""
    from core.scrub import scrub, scrub_secrets

    text = "Mail dana@example.com from /home/dana/app with token ghp_Zr8w2Qk5Lm9Tn3Vx7Bc1Df4Gh6Jk0Ps2Ru5Wy"
    live = scrub_secrets(text)
    assert "dana@example.com" in live and "/home/dana/app" in live and "[REDACTED:github-token]" in live
    transcript = scrub(text)
    assert "dana@example.com" not in transcript and "/home/dana" not in transcript


def test_a_skill_drafted_or_revised_with_a_secret_in_it_is_stored_scrubbed(seat):
    """The skill writers every drafter and refiner goes through (a model's draft, a lead's edit)."""
    from learning.memory import skills

    skill = skills.create(seat=seat, name="rotate-keys", description="Rotate " + SECRETS["stripe-key"][0],
                          body="1. Log in with " + SECRETS["url-password"][0], trigger="inline")
    skills.revise(skill=skill, body="1. Export " + SECRETS["aws-access-key"][0] + " " + SECRETS["aws-secret-key"][0],
                  reason="rotated")
    skill.refresh_from_db()
    assert skill.body == "1. Export [REDACTED:aws-access-key] [REDACTED:aws-secret-key]"
    rows = every_row_as_text()
    for kind, (_, value) in SECRETS.items():
        assert not [table for table, text in rows if value.lower() in text], f"{kind} stored verbatim"
