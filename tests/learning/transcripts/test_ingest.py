"""The loop end to end over the fixture set, the command, and the admin actions."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from core.models import Event
from learning.transcripts.ingest import ingest
from learning.transcripts.models import Recommendation, Shard, TranscriptEpisode

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "transcripts"
LESSON = "Tests run with `make test`, never bare pytest."


def _files(*names):
    return [str(FIXTURES / "-home-dev-acme-api" / f"{n}.jsonl") for n in names]


def test_the_fixture_set_climbs_the_ladder_session_by_session(seat, tmp_path):
    first = ingest(paths=_files("sess-a"), seat=seat, repo=str(tmp_path))
    assert first.pseudo_user["tool-result"] == 5 and first.pseudo_user["local-command-caveat"] == 1
    assert any("sess-a.jsonl:17: malformed line skipped" in w for w in first.warnings)
    assert first.scrubbed["openai-key"] == 1
    # the lesson said twice in one session: one source, to review
    assert list(Shard.objects.filter(text=LESSON).order_by("pk").values_list("status", flat=True)) == ["review", "absorbed"]
    second = ingest(paths=_files("sess-b"), seat=seat, repo=str(tmp_path))
    assert second.pseudo_user["hook-output"] == 2 and second.pseudo_user["compaction-summary"] == 1
    published = Shard.objects.get(text=LESSON, status=Shard.PUBLISHED)
    assert published.session_id == "sess-b" and published.evidence["distinct_sources"] == 2
    third = ingest(paths=_files("sess-c"), seat=seat, repo=str(tmp_path))
    dup = [d for d in third.decisions if d[0].text == LESSON]
    assert dup[0][1] == Shard.REJECTED and "near-duplicate of published" in dup[0][2]
    assert [(r.tier, r.target_path) for r in Recommendation.objects.all()] == [("rule", "CLAUDE.md")]
    ingest(paths=_files("sess-d"), seat=seat, repo=str(tmp_path))
    recs = {(r.tier, r.scope_key, r.target_path) for r in Recommendation.objects.all()}
    assert ("skill", "two engine check", ".claude/skills/two-engine-check/SKILL.md") in recs
    assert {tier for tier, _k, _p in recs} == {"rule", "fact", "skill"}


def test_re_ingesting_the_same_files_adds_nothing_and_calls_no_model(seat, tmp_path):
    from core.models import Event as E

    ingest(paths=[str(FIXTURES)], seat=seat, repo=str(tmp_path))
    counts = (TranscriptEpisode.objects.count(), Shard.objects.count(), E.objects.filter(name="auxiliary_spend").count())
    again = ingest(paths=[str(FIXTURES)], seat=seat, repo=str(tmp_path))
    assert again.episodes == 0 and again.shards == [] and again.warnings == []
    assert (TranscriptEpisode.objects.count(), Shard.objects.count(), E.objects.filter(name="auxiliary_spend").count()) == counts


def test_the_rows_record_the_seat_the_transcripts_belong_to(seat, other_seat):
    ingest(paths=_files("sess-a"), seat=other_seat)
    assert set(TranscriptEpisode.objects.values_list("seat__handle", flat=True)) == {"bo"}
    assert set(Shard.objects.values_list("seat__handle", flat=True)) == {"bo"}
    assert set(Event.objects.filter(name="auxiliary_spend").values_list("seat__handle", flat=True)) == {"bo"}


def test_the_command_prints_the_summary_and_every_warning(seat, tmp_path):
    out = io.StringIO()
    call_command("ingest_transcripts", str(FIXTURES), "--repo", str(tmp_path), "--seat", "ana", stdout=out)
    text = out.getvalue()
    assert text.splitlines()[0] == "seat: ana"
    for expected in ("episodes: 12", "candidate shards:", "ladder outcomes:", "recommendations:",
                     "sess-a.jsonl:17: malformed line skipped", "read "):
        assert expected in text


def test_a_missing_path_is_refused_naming_it_before_anything_is_read(seat, tmp_path):
    with pytest.raises(CommandError) as err:
        call_command("ingest_transcripts", str(FIXTURES), str(tmp_path / "missing"), "--seat", "ana",
                     stdout=io.StringIO())
    assert str(err.value) == f"no such file or folder: {tmp_path / 'missing'}"
    assert not TranscriptEpisode.objects.exists()


def test_the_command_defaults_to_the_first_active_seat(seat, other_seat):
    out = io.StringIO()
    call_command("ingest_transcripts", _files("sess-a")[0], stdout=out)
    assert out.getvalue().splitlines()[0].startswith("seat: ana (the default, the first active seat;")


def test_the_command_refuses_an_unknown_seat(seat):
    with pytest.raises(CommandError, match="no such seat"):
        call_command("ingest_transcripts", _files("sess-a")[0], "--seat", "nobody", stdout=io.StringIO())


def test_admin_actions_record_the_acting_user(client, lead, seat, tmp_path):
    ingest(paths=[str(FIXTURES)], seat=seat, repo=str(tmp_path))
    client.force_login(lead)
    pending = Shard.objects.filter(status=Shard.PENDING).first()
    response = client.post("/admin/transcripts/shard/", {"action": "reject", "_selected_action": [pending.pk]})
    assert response.status_code == 302
    pending.refresh_from_db()
    assert pending.status == Shard.REJECTED and pending.rejected_by == Shard.BY_PERSON
    rec = Recommendation.objects.filter(mode=Recommendation.EDIT).first()
    before = (tmp_path / rec.target_path).exists()
    client.post("/admin/transcripts/recommendation/", {"action": "approve", "_selected_action": [rec.pk]})
    rec.refresh_from_db()
    assert rec.status == Recommendation.APPROVED and rec.reviewed_by == lead
    assert (tmp_path / rec.target_path).exists() == before
    actions = Event.objects.filter(name="transcripts_admin_action").order_by("id")
    assert [(e.payload["action"], e.payload["user"]) for e in actions] == [("reject_memory", "lena"), ("approve", "lena")]
    assert not lead.is_superuser  # the leads group's own permissions


def test_a_leads_form_changes_no_state_only_the_actions_do(client, lead, seat, tmp_path):
    ingest(paths=[str(FIXTURES)], seat=seat, repo=str(tmp_path))
    client.force_login(lead)
    shard = Shard.objects.filter(status=Shard.PENDING).first()
    page = client.get(f"/admin/transcripts/shard/{shard.pk}/change/").content.decode()
    assert 'name="status"' not in page and shard.reason in page
    client.post(f"/admin/transcripts/shard/{shard.pk}/change/", {"status": Shard.PUBLISHED, "text": "forged"})
    shard.refresh_from_db()
    assert shard.status == Shard.PENDING and shard.text != "forged"
    rec = Recommendation.objects.filter(mode=Recommendation.EDIT).first()
    page = client.get(f"/admin/transcripts/recommendation/{rec.pk}/change/").content.decode()
    assert not any(f'name="{f}"' in page for f in ("status", "mode", "target_path"))
    client.post(f"/admin/transcripts/recommendation/{rec.pk}/change/", {"status": "installed", "mode": "create", "target_path": "x.md"})
    rec.refresh_from_db()
    assert (rec.status, rec.mode) == (Recommendation.PROPOSED, Recommendation.EDIT) and rec.target_path != "x.md"


def test_staff_who_are_not_leads_cannot_run_the_review_actions(client, seat, tmp_path, django_user_model):
    from django.contrib.auth.models import Permission

    ingest(paths=[str(FIXTURES)], seat=seat, repo=str(tmp_path))
    staff = django_user_model.objects.create_user("sam", password="pw", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="view_shard"))
    client.force_login(staff)
    pending = Shard.objects.filter(status=Shard.PENDING).first()
    assert client.get("/admin/transcripts/shard/").status_code == 200
    client.post("/admin/transcripts/shard/", {"action": "reject", "_selected_action": [pending.pk]})
    pending.refresh_from_db()
    assert pending.status == Shard.PENDING
    assert client.get("/admin/transcripts/recommendation/").status_code == 403


def test_the_admin_shows_the_rendered_diff(client, lead, seat, tmp_path):
    ingest(paths=[str(FIXTURES)], seat=seat, repo=str(tmp_path))
    client.force_login(lead)
    rec = Recommendation.objects.first()
    page = client.get(f"/admin/transcripts/recommendation/{rec.pk}/change/").content.decode()
    assert "+++ b/" + rec.target_path in page
    listing = client.get("/admin/transcripts/recommendation/").content.decode()
    # no later session has been observed, so every recommendation's uses are unknown (never a made-up 0)
    uses = re.findall(r'<td class="field-uses_shown">([^<]*)</td>', listing)
    assert uses == ["unknown"] * Recommendation.objects.count() and uses
    assert list(tmp_path.iterdir()) == []  # proposing and showing a diff writes nothing into the repo


def test_a_grown_file_adds_only_its_new_episodes_and_a_rewritten_one_none_twice(seat, tmp_path):
    from tests.learning.transcripts.conftest import corrected

    s = corrected("s1")
    path = s.write(tmp_path / "s1.jsonl")
    ingest(paths=[str(path)], seat=seat)
    s.call("t9", command="rm -rf build").result("t9", "ok").user("Don't delete the build folder; the cache lives there and takes an hour.")
    path.write_text(s.text())
    grown = ingest(paths=[str(path)], seat=seat)
    assert grown.episodes == 1 and TranscriptEpisode.objects.count() == 2
    path.write_text('{"type": "summary", "summary": "rewritten"}\n' + s.text())
    rewritten = ingest(paths=[str(path)], seat=seat)
    assert any("changed since the last read" in w for w in rewritten.warnings)
    assert rewritten.episodes == 0 and TranscriptEpisode.objects.count() == 2
