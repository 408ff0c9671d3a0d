"""The leak corpus: every kind of secret, planted in a real session, never reaches the database.

Each kind is planted where a transcript carries it into stored text (what the person asked, a
failed command, its error output, the person's correction) in a session under a project folder
named the way Claude Code names it (``-home-jdoe-...``). After the whole loop, every column of
every table is searched. The false-positive check scrubs
every string of the dev corpus: nothing but home paths and real e-mail addresses is touched.
"""

from __future__ import annotations

import json
import random
import re

import pytest
from django.db import connection

from bench.claude_sessions import write_session
from core.scrub import scrub
from learning.transcripts.ingest import ingest
from learning.transcripts.models import Shard, TranscriptEpisode, TranscriptSource
from tests.learning.transcripts.dev_corpus import CLAUDE_CODE, dev_files

AWS_ID = "AKIAQ3EGRLEAKEDID7XZ"
SECRETS = {
    "stripe keyed": ("STRIPE_SECRET_KEY=", "sk_live_51LeakKeyed0000aaaaBBBBccccDDDD"),
    "stripe bare": ("the key is ", "sk_live_4eC39LeakBare1111zzzzYYYYxx"),
    "jwt": ("Authorization: ", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJsZWFrZWQtdXNlciJ9.LeakSig0123456789abcdefXYZ"),
    "truncated pem": ("-----BEGIN RSA PRIVATE KEY-----\n", "MIIEowIBAAKCAQEAleakPemBody0123456789abcdefABCDEFGHIJKLMNOP"),
    "email": ("mail ", "jane.leaked@example-corp.com"),
    "aws secret": (f"{AWS_ID} ", "wJalrXUtnLEAK/K7MDENG/bPxRfiCY9EXAMPLEKE"),
    "slack webhook": ("post to ", "https://hooks.slack.com/services/T0LEAK000/B0LEAK000/LeakWebhookSecret0123"),
    "huggingface": ("HF ", "hf_LeakHuggingFaceToken0123456789abcdef"),
    "gitlab": ("GL ", "glpat-LeakGitlabToken01234567"),
    "azure": ("DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=", "LeakAzureKey0123456789abcdefABCDEFghijkl+/=="),
    "password flag": ("mysql --password ", "LeakPassw0rdFlag"),
}
USER = "jdoe"


def _planted() -> str:
    return " ; ".join(prefix + value for prefix, value in SECRETS.values())


def _plant(lines: list[str], sid: str) -> list[str]:
    """A turn carrying every secret in the ask, a failed command, its error and the correction."""
    secrets = _planted()
    cwd = f"/home/{USER}/projects/shop"
    base = {"sessionId": sid, "cwd": cwd, "isSidechain": False, "type": "user", "timestamp": "2026-02-11T10:00:00Z"}

    def rec(n, **extra):
        return json.dumps({**base, "uuid": f"leak-{n}", **extra})

    return lines + [
        rec(1, message={"role": "user", "content": f"Deploy it. {secrets}"}),
        rec(2, type="assistant", message={"role": "assistant", "content": [
            {"type": "tool_use", "id": "leak-t1", "name": "Bash", "input": {"command": f"./deploy.sh {secrets}"}}]}),
        rec(3, message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "leak-t1", "is_error": True,
                        "content": f"Exit code 1\nerror: deploy refused {secrets} at {cwd}/deploy.sh"}]}, toolUseResult="Error"),
        rec(4, type="assistant", message={"role": "assistant", "content": [
            {"type": "tool_use", "id": "leak-t2", "name": "Bash", "input": {"command": f"./deploy.sh --safe {secrets}"}}]}),
        rec(5, message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "leak-t2", "content": "ok"}]}, toolUseResult={}),
        rec(6, message={"role": "user", "content": f"No, never deploy with secrets on the command line. I said: {secrets}"}),
    ]


def _bases(tmp_path):
    yield "generated", write_session(tmp_path / "gen", random.Random(2), index=1, calls_per_turn=20)[0]
    for path in dev_files():
        if path.name == "tool_heavy.jsonl":
            yield "dev", path


def _database_text() -> str:
    """Every row of every table as text."""
    chunks = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            chunks.extend(repr(row) for row in cursor.fetchall())
    return "\n".join(chunks)


@pytest.mark.django_db(transaction=True)
def test_no_planted_secret_reaches_the_database(seat, tmp_path):
    folder = tmp_path / "projects" / f"-home-{USER}-projects-shop"
    folder.mkdir(parents=True)
    planted = 0
    for name, base in _bases(tmp_path):
        lines = base.read_text().splitlines()
        sid = next((json.loads(line).get("sessionId") for line in lines if '"sessionId"' in line), name)
        (folder / f"{name}.jsonl").write_text("\n".join(_plant(lines, sid)) + "\n")
        planted += 1
    summary = ingest(paths=[str(folder.parent)], seat=seat)
    assert summary.files == planted and summary.episodes >= planted
    leaked_into = TranscriptEpisode.objects.filter(ask__contains="Deploy it.")
    assert leaked_into.count() == 2 * planted  # the self-corrected and the corrected episode, stored scrubbed
    assert Shard.objects.filter(text__icontains="never deploy with secrets").exists()
    assert all(f"-home-{USER}" not in p and USER not in p for p in TranscriptSource.objects.values_list("path", flat=True))
    stored = _database_text()
    for kind, (_prefix, value) in SECRETS.items():
        assert value not in stored, f"{kind} leaked"
        assert value[:16] not in stored, f"{kind} leaked in part"
    assert AWS_ID not in stored
    assert not re.search(rf"(?<![A-Za-z]){USER}(?![A-Za-z])", stored), "the project-folder user name leaked"
    assert "marco" not in stored.lower() if dev_files() else True  # the dev corpus's own user name
    for label in ("stripe-key", "jwt", "private-key", "email", "aws-secret-key", "slack-webhook", "huggingface-token",
                  "gitlab-token", "azure-key", "password-flag", "home-path"):
        assert summary.scrubbed[label] > 0, label


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def test_the_dev_corpus_has_no_false_positives():
    files = dev_files()
    if not files:
        pytest.skip("no ../shared/bench-data/claude-code beside the repository")
    touched, checked = {}, 0
    for path in files:
        for line in path.read_bytes().splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            for text in _strings(record):
                checked += 1
                for label in re.findall(r"\[REDACTED:([a-z\-]+)\]", scrub(text)):
                    touched[label] = touched.get(label, 0) + 1
                    if label == "email":
                        assert re.search(r"[\w.]+@[\w.]+\.(?:ai|com|org|io)", text)
    assert checked > 5000
    assert set(touched) <= {"home-path", "email"}, touched
    # ids, hashes and prose survive untouched
    assert scrub("session 491e126e-1e71-469c-ade2-fcc8af567c74 at 9fceb02d, total_tokens: 33894") == \
        "session 491e126e-1e71-469c-ade2-fcc8af567c74 at 9fceb02d, total_tokens: 33894"
    assert str(CLAUDE_CODE)
