"""## Synthesized skills: within the character budget, exactly the fitted lines stamped, stale marked."""

from django.db import DatabaseError

from core.models import Event
from learning.memory import skills
from learning.models import SynthesizedSkill
from learning.prefetch import bounds, skills_block
from tests.learning.memory.rows import skill

from .conftest import block


def test_exactly_the_skills_whose_lines_fitted_are_stamped(seat, run):
    for i in range(10):
        skill(seat, f"skill-{i:02d}", f"procedure {i} " + "x" * 380)
    result = run(ask="anything")
    text = block(result, "synthesized_skills")["text"]
    shown = {s.name for s in SynthesizedSkill.objects.filter(seat=seat) if f"- {s.name}:" in text}
    stamped = set(SynthesizedSkill.objects.filter(seat=seat, last_used_at__isnull=False).values_list("name", flat=True))
    # the offer moves the staleness clock only; the use count is the post-turn SkillUse worker's
    assert not SynthesizedSkill.objects.filter(seat=seat, use_count__gt=0).exists()
    assert 0 < len(shown) < 10
    assert stamped == shown
    assert all(s.last_used_at is None for s in SynthesizedSkill.objects.filter(seat=seat).exclude(name__in=shown))
    lines = [line for line in text.splitlines() if line.startswith("- ")]
    assert sum(len(line) + 1 for line in lines) <= bounds.SKILL_CATALOGUE_CHARS
    assert f"{10 - len(shown)} more of your skills did not fit" in text


def test_stale_skills_are_marked_and_archived_ones_hidden(seat, run):
    skill(seat, "fresh", "a live procedure")
    skill(seat, "ageing", "an old procedure", state=SynthesizedSkill.STALE)
    skill(seat, "gone", "an archived procedure", state=SynthesizedSkill.ARCHIVED)
    text = block(run(ask="anything"), "synthesized_skills")["text"]
    assert "- fresh: a live procedure\n" in text + "\n"
    assert f"- ageing: an old procedure{skills_block.STALE_MARK}" in text
    assert "gone" not in text


def test_being_offered_revives_a_stale_skill(seat, run):
    stale = skill(seat, "ageing", "an old procedure", state=SynthesizedSkill.STALE)
    run(ask="anything")
    stale.refresh_from_db()
    assert stale.state == SynthesizedSkill.ACTIVE and stale.last_used_at is not None and stale.use_count == 0


def test_a_stamp_that_cannot_be_written_is_announced_and_the_block_still_renders(seat, run, monkeypatch):
    skill(seat, "deploy", "ship the service")

    def broken(*args, **kwargs):
        raise DatabaseError("disk I/O error")

    monkeypatch.setattr(skills, "touch_offered", broken)
    result = run(ask="anything")
    assert "- deploy: ship the service" in block(result, "synthesized_skills")["text"]
    failed = Event.objects.get(name="skill_telemetry_write_failed")
    assert failed.turn_id == result["run_id"] and failed.payload["error"] == "disk I/O error"


def test_no_skills_no_block(seat, run):
    assert block(run(ask="anything"), "synthesized_skills")["text"] == ""


def test_the_menu_reads_each_skill_without_its_body(seat):
    skill(seat, "deploy", "ship the service", body="# deploy\n\n" + "1. a long step\n" * 200)
    (read,) = skills_block.ordered_catalogue(seat)
    assert skills_block.menu_line(read) == "- deploy: ship the service"
    assert not hasattr(read, "body")
