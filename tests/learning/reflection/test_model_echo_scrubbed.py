"""A model that answers with a secret (one it inferred, or one a prompt carried in another form) has it
scrubbed where the answer is stored: the diary note, the counterparty profile and the events that report them."""

from __future__ import annotations

import json

from learning.models import CounterpartyProfile, DiaryEntry
from learning.reflection import reflect_turn
from tests.test_secrets_scrubbed import SECRETS, every_row_as_text


def test_a_note_and_a_profile_a_model_writes_with_secrets_in_them_are_stored_scrubbed(seat, make_turn, scripted):
    content = "Maya prefers short bullet-point status updates; " + " ".join(value for value, _ in SECRETS.values())
    scripted.queue("persist_decision", json.dumps(
        {"classification": "LONG", "content": content, "ttl_days": None, "reason": "deploy uses " + SECRETS["jwt"][0]}))
    scripted.queue("profile_update", json.dumps({
        "communication_style": "short bullet points " + SECRETS["stripe-key"][0],
        "past_decisions": [], "sensitivities": [], "topics": ["status updates " + SECRETS["url-password"][0]]}))
    reflect_turn(make_turn().pk)
    note = DiaryEntry.objects.get(seat=seat).content
    assert note.startswith("Maya prefers short") and "[REDACTED:aws-access-key]" in note
    profile = CounterpartyProfile.objects.get(observer=seat)
    assert profile.communication_style == "short bullet points [REDACTED:stripe-key]"
    rows = every_row_as_text()
    for kind, (_, value) in SECRETS.items():
        leaks = sorted({table for table, text in rows if value.lower() in text})
        assert not leaks, f"{kind} stored verbatim in {leaks}"
