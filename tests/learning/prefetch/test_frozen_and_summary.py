"""Frozen at turn start, and prefetch_summary with its per-block telemetry and denominator."""

import types
from datetime import timedelta

import pytest
from django.utils import timezone

from core.models import Event
from knowledge.pages import save_page
from learning.models import PrefetchSnapshot, SynthesizedSkill
from learning.prefetch import BLOCKS, PrefetchRequest, assemble, prefetch
from learning.prefetch.blocks import BlockResult
from learning.review import health
from tests.factories import SeatFactory
from tests.learning.memory.rows import episode, note, skill

from .conftest import aux_spend


@pytest.fixture
def memory(seat, serve_native):
    note(seat, "The billing export runs nightly at 02:00")
    episode(seat, ask="fix the billing export", did="restarted the export job", tools=["jira_get"], run_id="old-1")
    skill(seat, "restart-export", "restart the nightly billing export")
    save_page(container_key="ENG", title="Billing export runbook", body="restart steps for the billing export")
    serve_native(scope=["ENG"])


def test_same_run_id_gets_the_same_prefix_back_without_recomputation(seat, run, memory, embed_calls):
    first = run(run_id="turn-7", ask="the billing export failed again")
    spent, embeds = aux_spend("turn-7"), len(embed_calls)
    stamped = SynthesizedSkill.objects.get(name="restart-export").last_used_at
    second = run(run_id="turn-7", ask="something else entirely", requires_recon=True)
    assert second["frozen"] is True and first["frozen"] is False
    assert second["blocks"] == first["blocks"] and second["prompt"] == first["prompt"]
    assert aux_spend("turn-7") == spent and len(embed_calls) == embeds
    assert Event.objects.filter(name="prefetch_summary", turn_id="turn-7").count() == 1
    # stamped once at the first offer, not again by the frozen repeat
    assert stamped is not None and SynthesizedSkill.objects.get(name="restart-export").last_used_at == stamped


def test_another_seats_use_of_a_run_id_gets_its_own_prefix(seat, run, company, role, unit):
    mine = run(run_id="turn-8", ask="x")
    other = SeatFactory(company=company, role=role, unit=unit, handle="zed")
    theirs = prefetch(seat=other, request=PrefetchRequest(run_id="turn-8", ask="y"))
    assert mine["frozen"] is False and theirs["frozen"] is False and theirs["ask"] == "y"
    assert PrefetchSnapshot.objects.filter(run_id="turn-8").count() == 2


def test_summary_records_per_block_hit_bytes_selection_count_and_embedding(seat, run, memory):
    result = run(ask="the billing export failed again")
    event = Event.objects.get(name="prefetch_summary", turn_id=result["run_id"])
    payload = event.payload
    assert set(payload["blocks"]) == {m.NAME for m in BLOCKS}
    for b in result["blocks"]:
        assert payload["blocks"][b["name"]] == {"hit": b["hit"], "bytes": b["bytes"]}
        assert payload[f"{b['name']}_hit"] is b["hit"] and payload[f"{b['name']}_bytes"] == b["bytes"]
    assert payload["relevant_knowledge_selection_count"] == 1
    assert payload["turn_embedding"] == "embedded" and payload["trigger_requires_recon"] is False
    hits = sum(b["hit"] for b in result["blocks"])
    assert payload["summary"] == f"prefetch: {hits}/{len(BLOCKS)} hits"


def test_a_block_that_says_nothing_was_found_is_a_miss(seat, run, serve_native):
    serve_native(scope=["ENG"])  # searched; no page in scope
    result = run(ask="rotate the signing key")
    payload = result["summary"]
    knowledge = next(b for b in result["blocks"] if b["name"] == "relevant_knowledge")
    assert "No knowledge-base page was surfaced" in knowledge["text"]  # the hint is still shown
    assert payload["relevant_knowledge_hit"] is False and payload["relevant_knowledge_selection_count"] == 0
    turns, rates = health.prefetch_hit_rates(since=timezone.now() - timedelta(days=1), seat=seat)
    assert {r.block: r.rate for r in rates}["relevant_knowledge"] == 0.0


def test_the_denominator_is_the_length_of_the_block_list(seat, run, monkeypatch):
    extra = types.SimpleNamespace(NAME="extra_block", start=lambda ctx: (lambda: BlockResult("extra_block", "## Extra")))
    monkeypatch.setattr(assemble, "BLOCKS", (*assemble.BLOCKS, extra))
    result = run(ask="anything")
    assert result["summary"]["block_count"] == len(BLOCKS) + 1
    assert result["summary"]["summary"].endswith(f"/{len(BLOCKS) + 1} hits")


def test_a_block_that_raises_renders_nothing_and_the_turn_still_gets_its_prefix(seat, run, monkeypatch):
    def explode(ctx):
        raise RuntimeError("bug")

    monkeypatch.setattr(assemble.BLOCKS[2], "start", explode)
    note(seat, "Ana prefers digests")
    result = run(ask="+1", requires_recon=True)
    assert [b["text"] for b in result["blocks"] if b["name"] == "synthesized_skills"] == [""]
    assert result["summary"]["block_count"] == len(BLOCKS)


def test_frozen_prefixes_are_kept_for_the_most_recent_runs_only(seat, run, monkeypatch):
    monkeypatch.setattr(assemble.bounds, "FROZEN_RUNS_KEPT", 3)
    monkeypatch.setattr(assemble.bounds, "SNAPSHOT_PRUNE_EVERY", 1)
    for i in range(5):
        run(run_id=f"r{i}", ask="+1", requires_recon=True)
    assert list(PrefetchSnapshot.objects.order_by("id").values_list("run_id", flat=True)) == ["r2", "r3", "r4"]


def test_a_busy_seat_never_evicts_another_seats_frozen_prefix(seat, other_seat, run, monkeypatch):
    monkeypatch.setattr(assemble.bounds, "FROZEN_RUNS_KEPT", 3)
    monkeypatch.setattr(assemble.bounds, "SNAPSHOT_PRUNE_EVERY", 1)
    quiet = run(target=other_seat, run_id="quiet-1", ask="+1", requires_recon=True)
    for i in range(6):
        run(run_id=f"busy-{i}", ask="+1", requires_recon=True)
    assert list(PrefetchSnapshot.objects.filter(seat=other_seat).values_list("run_id", flat=True)) == ["quiet-1"]
    assert list(PrefetchSnapshot.objects.filter(seat=seat).order_by("id").values_list("run_id", flat=True)) == [
        "busy-3", "busy-4", "busy-5"]
    again = run(target=other_seat, run_id="quiet-1", ask="something else", requires_recon=True)
    assert again["frozen"] is True and again["prompt"] == quiet["prompt"]


def test_pruning_the_frozen_prefixes_is_amortised_over_turn_starts(seat, run, monkeypatch):
    monkeypatch.setattr(assemble.bounds, "FROZEN_RUNS_KEPT", 2)
    monkeypatch.setattr(assemble.bounds, "SNAPSHOT_PRUNE_EVERY", 4)
    counts = []
    for i in range(12):
        run(run_id=f"r{i}", ask="+1", requires_recon=True)
        counts.append(PrefetchSnapshot.objects.count())
    assert max(counts) <= 2 + 4  # never more than the kept runs and one pruning period
    assert any(later < earlier for earlier, later in zip(counts, counts[1:], strict=False))  # it did prune
    assert PrefetchSnapshot.objects.order_by("-id").first().run_id == "r11"

