"""No cold-start misses: a process loads its embedder when it starts, and an embed that arrives
during that load waits for it instead of spending its budget on it and storing no vector.

The slow load is the wire's: the fake embeddings endpoint stalls the warm-up request until the
test releases it, so nothing here depends on how fast anything runs.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from core.providers.embeddings import embed_one, warm
from crewlet.config import schema
from tests.fakes.openai_embeddings_server import FakeEmbeddingsServer

ROOT = Path(__file__).resolve().parents[3]
BUDGET = 0.3  # far below the stall: an embed that spent its budget on the load could not succeed


@pytest.fixture
def remote_embedder(monkeypatch, serve_config):
    monkeypatch.setenv("FAKE_EMBED_KEY", "sk-test")
    warm.reset()
    with FakeEmbeddingsServer(api_key="sk-test") as server:
        spec = schema.EmbeddingSpec(kind="openai_compat", model="text-embedding-3-small", base_url=server.base_url,
                                    api_key_env="FAKE_EMBED_KEY", timeout_seconds=60)
        serve_config(providers=schema.Providers(embeddings=spec))
        yield server
        server.release()
    warm.reset()


def until(predicate, seconds=30.0) -> bool:
    deadline = time.monotonic() + seconds
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.01)
    return predicate()


def test_an_embed_during_the_start_up_load_waits_for_it_and_gets_its_vector(remote_embedder):
    remote_embedder.stall(60)
    warm.start()
    assert until(lambda: len(remote_embedder.requests) == 1)  # the warm-up request is in flight, stalled
    results = []
    first_turn = threading.Thread(target=lambda: results.append(embed_one("deploy the hotfix", budget=BUDGET)))
    before = warm.waiters
    first_turn.start()
    assert until(lambda: warm.waiters == before + 1), "the embed did not wait for the load in progress"
    remote_embedder.release()
    first_turn.join(timeout=30)
    assert results[0].status == "embedded" and results[0].vector
    assert warm.warmed() and remote_embedder.requests[0]["input"] == [warm.WARM_TEXT]


def test_without_the_start_up_load_the_first_embed_spends_its_budget_and_has_no_vector(remote_embedder):
    """The control: the same slow first request, with no warm-up, loses the vector."""
    remote_embedder.stall(60)
    result = embed_one("deploy the hotfix", budget=BUDGET)
    assert result.status == "timeout" and result.vector is None


def test_a_queue_worker_loads_the_embedder_when_it_spawns(remote_embedder):
    from django_q.signals import post_spawn

    assert not warm.warmed()
    post_spawn.send(sender="django_q", proc_name="Process-1:1")  # what django-q2 sends as a worker starts
    assert warm.warmed() and remote_embedder.requests[0]["input"] == [warm.WARM_TEXT]


@pytest.mark.real_model
def test_a_fresh_web_process_has_its_first_vector_within_the_prefetch_budget(tmp_path, empty_database):
    """A real process start with the packaged local model: importing the WSGI app starts the load,
    and the first embed (a turn start's, with its 2 s budget) gets its vector."""
    config = tmp_path / "crewlet.toml"
    config.write_text('[company]\nname = "Acme"\n[providers.embeddings]\nkind = "local"\n')
    script = (
        "import os, django; os.environ['DJANGO_SETTINGS_MODULE'] = 'crewlet.settings'; django.setup()\n"
        "from django.core.management import call_command; call_command('migrate', verbosity=0)\n"
        "import crewlet.wsgi\n"
        "from core.providers.embeddings import embed_one, warm\n"
        "from core.providers.embeddings.base import PREFETCH_EMBED_BUDGET\n"
        "r = embed_one('ship the 2.4.1 hotfix', budget=PREFETCH_EMBED_BUDGET)\n"
        "print(r.status, bool(r.vector), warm.warmed())\n"
    )
    env = {"DATABASE_URL": empty_database, "CREWLET_CONFIG": str(config),
           "CREWLET_VAR_DIR": str(tmp_path), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["embedded", "True", "True"]
