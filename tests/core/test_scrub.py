"""Scrubbing at extraction: each pattern becomes its labelled placeholder, and nothing raw is stored."""

from __future__ import annotations

import pytest

from core.scrub import ScrubStats, scrub
from learning.transcripts.ingest import ingest
from learning.transcripts.models import Shard, TranscriptEpisode, TranscriptSession
from tests.learning.transcripts.conftest import Session

CASES = [
    ("openai-key", "export KEY sk-proj-Q2xhdWRlQ29kZVRlc3RLZXkxMjM0NTY3ODkw now", "sk-proj-Q2xh"),
    ("openai-key", "sk-abcdefghijklmnopqrstuvwxyz0123456789ABCD", "sk-abcdef"),
    ("anthropic-key", "ANTHROPIC sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz_0123456789-xyz", "sk-ant-api03"),
    ("github-token", "remote https://x:ghp_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ@github.com", "ghp_abc"),
    ("github-token", "gho_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ", "gho_abc"),
    ("github-token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "github_pat_11"),
    ("aws-access-key", "aws_access_key_id AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("slack-token", "SLACK xoxb-123456789012-1234567890123-AbCdEfGhIjKl", "xoxb-1234"),
    ("google-api-key", "maps AIzaSyA-1234567890abcdefghijklmnopqrstu", "AIzaSyA-123"),
    ("bearer-token", "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig'", "eyJhbGci"),
    ("url-password", "DATABASE_URL=postgres://orders:hunter2@db.internal:5432/orders", "hunter2"),
    ("password", "login with password=correct-horse-battery", "correct-horse"),
    ("password", 'config {"db_password": "s3cr3t-value"}', "s3cr3t-value"),
    ("password", "export API_KEY='abc123def456'", "abc123def456"),
    ("private-key", "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\nAAAA\n-----END OPENSSH PRIVATE KEY-----\nend", "b3BlbnNzaC1rZXk"),
]


@pytest.mark.parametrize("label,text,secret", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_each_secret_pattern_becomes_its_labelled_placeholder(label, text, secret):
    stats = ScrubStats(counts={})
    out = scrub(text, stats)
    assert secret not in out
    assert f"[REDACTED:{label}]" in out
    assert stats.counts.get(label) == 1


def test_the_home_path_becomes_a_tilde():
    assert scrub("cd /home/dev/acme-api && cat /Users/bob/.netrc") == "cd ~/acme-api && cat ~/.netrc"
    assert scrub(r"C:\Users\bob\proj") == r"~\proj"


@pytest.mark.parametrize("text", ["token = get_token()", "password=None", "TOKEN=$GH_TOKEN", "skip the sk- prefix", "/homework/x"])
def test_ordinary_code_is_left_alone(text):
    assert scrub(text) == text


def test_the_key_name_stays_readable_beside_the_placeholder():
    assert scrub("Authorization: Bearer abcdefghijkl") == "Authorization: Bearer [REDACTED:bearer-token]"
    assert scrub("password: hunter22") == "password: [REDACTED:password]"


def test_nothing_raw_is_stored_after_ingest(tmp_path, seat):
    s = Session(cwd="/home/dev/secret-proj").user("Deploy with OPENAI_API_KEY=sk-proj-Q2xhdWRlQ29kZVRlc3RLZXkxMjM0NTY3ODkw.")
    s.call("t1", command="curl -H 'Authorization: Bearer abcdefghijklmnop' https://u:pw1234@api.acme.dev").result("t1", "401", error=True)
    s.user("No, the deploy token lives in /home/dev/.config/acme and never in the command line.")
    ingest(paths=[str(s.write(tmp_path / "s.jsonl"))], seat=seat)
    stored = " ".join(
        [str(v) for e in TranscriptEpisode.objects.values() for v in e.values()]
        + [str(v) for e in TranscriptSession.objects.values() for v in e.values()]
        + [s.text for s in Shard.objects.all()]
    )
    for secret in ("sk-proj-Q2xh", "abcdefghijklmnop", "pw1234", "/home/dev"):
        assert secret not in stored
    assert "[REDACTED:openai-key]" in stored and "[REDACTED:bearer-token]" in stored and "~/.config/acme" in stored
