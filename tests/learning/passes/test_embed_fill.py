import io
from datetime import timedelta

import pytest
from django.utils import timezone

from core.models import Event
from core.providers.embeddings.base import pieces_of
from core.providers.errors import ConfigurationError, RateLimitedError, TransientError
from core.vectors import pool
from learning.models import DiaryEntry, Episode, FillMinute
from learning.passes import embed_fill
from learning.passes.fill_requests import HOLD, PROBE_WORD
from tests.learning.passes.conftest import episode, note

pytestmark = pytest.mark.django_db


def fill(embedder, now, **kw):
    return embed_fill.run_fill(embedder=embedder, now=now, **kw)


def vectorless(model=DiaryEntry):
    return set(model.objects.filter(embedding__isnull=True).values_list("id", flat=True))


def test_fills_vectorless_live_notes_and_raw_turns_in_one_batch(seat, fake_embedder, fill_config, now):
    fill_config()
    a, b = note(seat, "Deploys freeze on Fridays"), note(seat, "Ana prefers digests")
    turn = episode(seat, age_days=1, ask="Message from Ana: fix build 1\nAna: the build fails on main\nAna: since the merge")
    result = fill(fake_embedder, now)
    assert result["filled"] == 3 and len(fake_embedder.calls) == 2  # the rows' batch, then the turn's ask's lines
    assert fake_embedder.calls[1] == ["Ana: the build fails on main", "Ana: since the merge"]  # not the label's line
    assert result["pieces_filled"] == 1 and turn.pieces.filter(embedding_model="fake-8").count() == 2
    for row in (a, b, turn):
        row.refresh_from_db()
        assert row.embedding_model == "fake-8" and row.embedding_dim == 8 and row.embedding is not None


def test_compacted_rows_expired_notes_and_current_vectors_are_never_sent(seat, fake_embedder, fill_config, now):
    fill_config()
    note(seat, "expired situational note", kind=DiaryEntry.SHORT, ttl_until=now - timedelta(hours=1))
    current = note(seat, "already has one")
    current.set_vector(fake_embedder.vector("already has one"), "fake-8")
    current.save()
    episode(seat, age_days=40, kind=Episode.COMPACTED, count=5)
    result = fill(fake_embedder, now)
    assert fake_embedder.calls == [] and result["filled"] == 0


def test_rows_of_a_model_or_width_the_company_left_are_embedded_again(seat, fake_embedder, fill_config, now):
    fill_config()
    old_model, old_width = note(seat, "old model note"), note(seat, "old width note")
    old_model.set_vector([1.0] * 8, "retired-model")
    old_model.save()
    old_width.set_vector([1.0] * 4, "fake-8")
    old_width.save()
    fill(fake_embedder, now)
    for row in (old_model, old_width):
        row.refresh_from_db()
        assert (row.embedding_model, row.embedding_dim) == ("fake-8", 8)


def test_a_minute_sends_at_most_sixteen_requests_and_the_next_resumes(seat, fake_embedder, fill_config, now):
    fill_config(bytes_per_minute=16 * 30)  # a 30-byte share a request: one note each
    for i in range(20):
        note(seat, f"observation number {i:02d} xx")  # 25 bytes
    first = fill(fake_embedder, now)
    assert first["requests"] == 16 and first["filled"] == 16 and "ran out" in first["stopped"]
    second = fill(fake_embedder, now + timedelta(minutes=1))
    assert second["filled"] == 4 and vectorless() == set()


def _run(command, *args):
    from django.core.management import call_command

    call_command(command, *args, stdout=io.StringIO(), stderr=io.StringIO())


def test_one_wall_clock_minute_is_one_company_budget_whoever_sends(seat, fill_config, monkeypatch):
    """The scheduled tick, ``run_pass embed_fill`` and ``backfill_embeddings`` in the same minute send,
    together, exactly one minute's budget: the company's whole budget, split among no nodes."""
    from learning.passes import ticks

    minute = timezone.now().replace(second=20, microsecond=0)
    monkeypatch.setattr(timezone, "now", lambda: minute)  # all three senders inside one wall-clock minute
    fill_config(requests_per_minute=4, bytes_per_minute=400)  # a 100-byte share a request
    for i in range(4):
        note(seat, f"note {i} " + "w" * 40)  # 47 bytes: two to a request

    tick = ticks.embed_fill()
    assert (tick["requests"], tick["bytes"], tick["filled"]) == (2, 188, 4)
    for i in range(4, 10):
        note(seat, f"note {i} " + "w" * 40)
    _run("run_pass", "embed_fill")  # the operator, in the same minute: what is left of it, not a new one
    assert len(vectorless()) == 2
    assert (FillMinute.objects.get().requests, FillMinute.objects.get().bytes) == (4, 376)
    _run("backfill_embeddings", "--max-minutes", "1")  # nothing left of the minute: sends nothing
    assert len(vectorless()) == 2
    assert (FillMinute.objects.get().requests, FillMinute.objects.get().bytes) == (4, 376)

    monkeypatch.setattr(timezone, "now", lambda: minute + timedelta(minutes=1))
    nxt = ticks.embed_fill()
    assert (nxt["requests"], nxt["bytes"], nxt["filled"], nxt["minute_requests"]) == (1, 94, 2, 1)
    assert vectorless() == set()


@pytest.mark.parametrize(
    "error", [RateLimitedError("429"), TransientError("timeout"), ConfigurationError("401 bad key"),
              ConfigurationError("model not served")],
)
def test_a_provider_failure_ends_the_minute_for_every_seat(seat, other_seat, fake_embedder, fill_config, now, error):
    fill_config()
    note(seat, "ana's note")
    theirs = note(other_seat, "bo's note")
    fake_embedder.cue(error)
    result = fill(fake_embedder, now)
    assert len(fake_embedder.calls) == 1 and result["filled"] == 0 and "at seat ana" in result["stopped"]
    theirs.refresh_from_db()
    assert theirs.embedding is None and theirs.embed_held_until is None
    again = fill(fake_embedder, now + timedelta(minutes=1))  # the same request is sent again
    assert fake_embedder.calls[1] == fake_embedder.calls[0] and again["filled"] == 2


def test_a_refused_batch_is_split_until_the_refused_note_is_alone_and_held(seat, fake_embedder, fill_config, now):
    fill_config()
    rows = [note(seat, text) for text in ("alpha note", "beta note", "POISON note", "delta note")]
    result = fill(fake_embedder, now)
    texts = fake_embedder.calls
    assert texts[0] == ["alpha note", "beta note", "POISON note", "delta note"]
    assert texts[1] == [PROBE_WORD]  # the minute's first answer was a refusal: judged by one word
    assert texts[2:] == [["alpha note", "beta note"], ["POISON note", "delta note"], ["POISON note"], ["delta note"]]
    assert result["judged"] == "notes" and result["filled"] == 3 and result["held_refused"] == 1
    poison = DiaryEntry.objects.get(pk=rows[2].pk)
    assert poison.embedding is None and poison.embed_held_until == now + HOLD
    assert vectorless() == {poison.pk}


def test_a_note_refused_alone_is_offered_again_alone_and_only_after_its_hour(seat, fake_embedder, fill_config, now):
    fill_config()
    poison = note(seat, "POISON note")
    note(seat, "alpha note")
    first = fill(fake_embedder, now)
    assert fake_embedder.calls == [["POISON note", "alpha note"], [PROBE_WORD], ["POISON note"], ["alpha note"]]
    assert (first["requests"], first["filled"], first["held_refused"]) == (4, 1, 1)

    fake_embedder.calls.clear()
    note(seat, "beta note"), note(seat, "gamma note")
    within = fill(fake_embedder, now + timedelta(minutes=30))
    assert fake_embedder.calls == [["beta note", "gamma note"]]  # within its hour it is not offered at all
    assert (within["requests"], within["filled"]) == (1, 2)

    fake_embedder.calls.clear()
    note(seat, "delta note"), note(seat, "epsilon note")
    after = fill(fake_embedder, now + timedelta(minutes=61))
    # after the hour: alone (refused again, it costs one request and the judging word), never
    # batched with its neighbours, whose batch goes through whole
    assert fake_embedder.calls == [["POISON note"], [PROBE_WORD], ["delta note", "epsilon note"]]
    assert (after["requests"], after["filled"], after["held_refused"]) == (3, 2, 1)
    assert DiaryEntry.objects.get(pk=poison.pk).embed_held_until == now + timedelta(minutes=61) + HOLD

    fake_embedder.refuse_marker = "never-matches"
    fake_embedder.calls.clear()
    note(seat, "zeta note"), note(seat, "eta note")
    last = fill(fake_embedder, now + timedelta(minutes=122))
    assert fake_embedder.calls == [["POISON note"], ["zeta note", "eta note"]]  # accepted alone
    assert (last["requests"], last["filled"]) == (2, 3)
    stored = DiaryEntry.objects.get(pk=poison.pk)
    assert stored.embedding is not None and stored.embed_pieces is None and vectorless() == set()


def test_a_change_of_provider_offers_the_notes_refused_alone_with_their_neighbours(seat, fake_embedder, fill_config, now):
    fill_config()
    poison = note(seat, "POISON note")
    note(seat, "alpha note")
    fill(fake_embedder, now)
    assert DiaryEntry.objects.get(pk=poison.pk).embed_pieces == {"alone": True}
    fill_config(bytes_per_minute=999_999)  # one of the four: what was refused was refused by the old provider
    fake_embedder.refuse_marker = "never-matches"
    fake_embedder.calls.clear()
    note(seat, "beta note")
    result = fill(fake_embedder, now + timedelta(minutes=1))
    assert fake_embedder.calls == [["POISON note", "beta note"]]
    assert (result["released_holds"], result["requests"], result["filled"]) == (1, 1, 2) and vectorless() == set()


def test_a_directionless_vector_holds_back_only_its_row(seat, fake_embedder, fill_config, now):
    fill_config()
    good, zero = note(seat, "good note"), note(seat, "ZERO note")
    result = fill(fake_embedder, now)
    assert len(fake_embedder.calls) == 1 and result["held_unusable"] == 1 and result["filled"] == 1
    zero.refresh_from_db()
    assert zero.embedding is None and zero.embed_held_until == now + HOLD
    event = Event.objects.get(name="memory_fill_vector_unusable")
    assert event.payload["row"] == f"diary:{zero.pk}" and event.payload["bytes"] == len("ZERO note")
    good.refresh_from_db()
    assert good.embedding is not None


def test_a_first_refusal_refused_again_alone_pauses_the_fill_for_an_hour(seat, fake_embedder, fill_config, now):
    fill_config()
    texts = ["a perfectly fine note", "another fine note", "a third fine note"]
    for text in texts:
        note(seat, text)
    fake_embedder.refuse_all = True
    result = fill(fake_embedder, now)
    assert fake_embedder.calls == [texts, [PROBE_WORD]] and result["judged"] == "configuration"
    assert (result["requests"], result["filled"], result["held_refused"]) == (2, 0, 0)
    assert Event.objects.filter(name="memory_fill_configuration_refused").count() == 1
    assert DiaryEntry.objects.filter(embed_held_until__isnull=False).count() == 0  # the notes are not blamed
    paused = fill(fake_embedder, now + timedelta(minutes=30))
    assert paused["ran"] is False and len(fake_embedder.calls) == 2
    fake_embedder.refuse_all = False
    again = fill(fake_embedder, now + timedelta(minutes=61))
    assert fake_embedder.calls[2:] == [texts] and (again["requests"], again["filled"]) == (1, 3)


def test_a_pause_is_lifted_and_holds_released_when_the_embeddings_config_changes(
    seat, fake_embedder, fill_config, now
):
    fill_config()
    held = note(seat, "POISON held note")
    fill(fake_embedder, now)  # held for an hour
    fill_config(model="fake-8", timeout_seconds=3.0, api_key_env="ROTATED_KEY")  # not one of the four
    assert DiaryEntry.objects.get(pk=held.pk).embed_held_until is not None
    fill(fake_embedder, now + timedelta(minutes=1))
    assert DiaryEntry.objects.get(pk=held.pk).embed_held_until is not None
    fake_embedder.refuse_all = True
    note(seat, "another")
    fill(fake_embedder, now + timedelta(minutes=2))  # paused on the configuration
    fake_embedder.refuse_all, fake_embedder.refuse_marker = False, "never-matches"
    fill_config(bytes_per_minute=999_999)  # the limits changed: holds and pause are about the old provider
    result = fill(fake_embedder, now + timedelta(minutes=3))
    assert result["ran"] is True and result["released_holds"] == 1 and result["filled"] == 2


def test_a_long_row_continues_across_minutes_and_pools_every_piece(seat, fill_config, now):
    from tests.learning.passes.conftest import FakeEmbedder

    embedder = FakeEmbedder(max_input_chars=20)
    fill_config(requests_per_minute=2, bytes_per_minute=100)  # a 50-byte share a request
    text = " ".join(f"word{i:02d}" for i in range(30))  # 209 bytes, 10 pieces of up to 20
    long_note, short = note(seat, text), note(seat, "short one")
    first = fill(embedder, now)
    assert first["continued"] == 1 and first["filled"] == 1  # the short row was filled meanwhile
    assert DiaryEntry.objects.get(pk=short.pk).embedding is not None
    continued = Event.objects.filter(name="memory_fill_input_continued").latest("id")
    assert continued.payload["row"] == f"diary:{long_note.pk}" and continued.payload["pieces_total"] == 10
    minutes = 1
    while DiaryEntry.objects.get(pk=long_note.pk).embedding is None and minutes < 20:
        fill(embedder, now + timedelta(minutes=minutes))
        minutes += 1
    assert minutes > 3  # it took as many minutes as its length needs
    pieces = pieces_of(text, 20)
    expected = pool([embedder.vector(p) for p in pieces], [len(p) for p in pieces])
    stored = DiaryEntry.objects.get(pk=long_note.pk)
    assert stored.embed_pieces is None
    assert stored.embedding == pytest.approx(expected, abs=1e-5)


def test_a_refused_piece_holds_the_long_row_and_its_retry_resumes_at_that_piece(seat, fill_config, now):
    from tests.learning.passes.conftest import FakeEmbedder

    embedder = FakeEmbedder(max_input_chars=12)
    fill_config(requests_per_minute=4, bytes_per_minute=160)  # a 40-byte share a request
    text = "aaaa bbbb cccc dddd eeee POISON ffff gggg hhhh iiii"
    pieces = pieces_of(text, 12)
    row = note(seat, text)
    for minute in range(4):
        fill(embedder, now + timedelta(minutes=minute))
    stored = DiaryEntry.objects.get(pk=row.pk)
    refused_at = next(i for i, p in enumerate(pieces) if "POISON" in p)
    assert stored.embedding is None and stored.embed_held_until is not None
    assert len(stored.embed_pieces["vectors"]) == refused_at  # the pieces before it are kept
    embedder.refuse_marker = "never-matches"
    embedder.calls.clear()
    fill(embedder, stored.embed_held_until + timedelta(seconds=1))
    assert embedder.calls[0][0] == pieces[refused_at]


def test_a_minute_that_runs_out_resumes_at_that_seat(seat, other_seat, fake_embedder, fill_config, now):
    fill_config(requests_per_minute=1, bytes_per_minute=30)
    a1, a2 = note(seat, "ana first  note xx"), note(seat, "ana second note xx")
    b1 = note(other_seat, "bo only note xxxxx")
    first = fill(fake_embedder, now)
    assert "at seat ana" in first["stopped"] and vectorless() == {a2.pk, b1.pk}
    second = fill(fake_embedder, now + timedelta(minutes=1))
    assert vectorless() == {b1.pk} and "at seat bo" in second["stopped"]
    fill(fake_embedder, now + timedelta(minutes=2))
    assert vectorless() == set() and a1.pk


def test_a_dry_run_counts_what_it_would_fill_and_sends_nothing(seat, fake_embedder, fill_config, now):
    fill_config()
    note(seat, "one")
    episode(seat)
    result = fill(fake_embedder, now, dry_run=True)
    assert result["would_fill"] == {"ana": {"notes": 1, "episodes": 1, "shards": 0}} and fake_embedder.calls == []


# ---- transcript shards and knowledge pages ---------------------------------------------------------


def test_shards_and_pages_of_an_old_model_or_with_no_vector_are_embedded_again(seat, fake_embedder, fill_config, now):
    from knowledge.pages import save_page
    from learning.transcripts.models import Shard
    from learning.transcripts.shards import make_shard

    old_shard = make_shard(seat=seat, text="Tests run with `make test`, never bare pytest.", session_id="s1")
    old_page = save_page(container_key="ENG", title="Releases", body="Tag, then push.")
    assert old_shard.embedding_model == old_page.embedding_model == "hashing-256"
    fill_config(kind="none")
    bare = make_shard(seat=seat, text="Migrations are squashed only on release branches.", session_id="s2")
    assert bare.embedding is None
    fill_config()
    dry = fill(fake_embedder, now, dry_run=True)
    assert dry["would_fill"][seat.handle]["shards"] == 2 and dry["would_fill_pages"] == 1
    result = fill(fake_embedder, now)
    assert result["filled"] == 3
    for row in (old_shard, bare, old_page):
        row.refresh_from_db()
        assert (row.embedding_model, row.embedding_dim) == ("fake-8", 8)
    assert Shard.objects.filter(embedding__isnull=True).count() == 0


def test_the_vetoes_work_again_after_a_model_change(seat, fill_config, now):
    from learning.transcripts import ladder
    from learning.transcripts.models import Shard
    from learning.transcripts.shards import make_shard

    lesson = "The staging database is seeded by hand before every demo."
    rejected = make_shard(seat=seat, text=lesson, session_id="s0")
    ladder.reject_memory(shard=rejected, by=Shard.BY_PERSON, actor="lena")
    fill_config(model="hashing-64", dimensions=64)  # the company changes its embedding model
    again = make_shard(seat=seat, text=lesson, session_id="s1")
    assert ladder.decide(again).status == Shard.PENDING  # blind: the rejected shard is of the old model
    embed_fill.run_fill(now=now)
    rejected.refresh_from_db()
    assert rejected.embedding_model == "hashing-64"
    outcome = ladder.decide(again)
    assert outcome.status == Shard.REJECTED and "resembles rejected" in outcome.reason


def test_a_shard_stored_without_a_vector_climbs_once_the_fill_embeds_it(seat, fill_config, now, tmp_path):
    from learning.transcripts.ingest import ingest
    from learning.transcripts.models import Shard
    from tests.learning.transcripts.conftest import corrected

    fill_config(kind="none")
    for sid in ("s1", "s2"):
        ingest(paths=[str(corrected(sid).write(tmp_path / f"{sid}.jsonl"))], seat=seat)
    assert set(Shard.objects.values_list("status", "reason")) == {(Shard.PENDING, "no vector yet: cannot be compared")}
    fill_config()
    embed_fill.run_fill(now=now)
    summary = ingest(paths=[str(tmp_path)], seat=seat)  # nothing new to read; the waiting shards climb
    assert summary.episodes == 0
    assert Shard.objects.filter(status=Shard.PUBLISHED, evidence__distinct_sources=2).count() == 1


def _embedded_turn(seat, embedder, asked: str):
    """A raw turn whose whole-text vector is current but whose lines have none (a turn written before
    the line search): only its lines are left for the fill. Its ask is one line of its own, so its
    one searched line (``episodes.search_pieces``: the ask's opening lines) is ``asked``."""
    from learning.memory import episodes

    row = episode(seat, age_days=1, ask=asked)
    row.set_vector(embedder.vector(episodes.text_of(row)), embedder.model)
    row.save()
    return row


def test_a_turn_whose_lines_were_refused_alone_is_offered_alone_after_its_hour(seat, fake_embedder, fill_config, now):
    fill_config()
    good = _embedded_turn(seat, fake_embedder, "Please open a PR.")
    poison = _embedded_turn(seat, fake_embedder, "POISON line.")
    first = fill(fake_embedder, now)
    assert fake_embedder.calls == [["Please open a PR.", "POISON line."], ["Please open a PR."], ["POISON line."]]
    assert first["pieces_filled"] == 1 and good.pieces.count() == 1
    assert Episode.objects.get(pk=poison.pk).embed_pieces == {"alone": True}

    fake_embedder.calls.clear()
    later = _embedded_turn(seat, fake_embedder, "Please merge the fix.")
    after = fill(fake_embedder, now + timedelta(minutes=61))
    # alone again (refused again, it costs its own request), not with the newer turn's lines
    assert fake_embedder.calls == [["POISON line."], ["Please merge the fix."]]
    assert after["pieces_filled"] == 1 and later.pieces.count() == 1 and poison.pieces.count() == 0
