"""SkillUse: every offered skill is marked used; a stale one is revived in the same transaction."""

from core import events
from learning.events import SkillRevived
from learning.memory import skills
from learning.models import SynthesizedSkill
from learning.reflection import reflect_turn
from learning.reflection.workers import skill_use


def test_every_offered_skill_is_marked_used_and_a_stale_one_revived(seat, make_turn):
    a = skills.create(seat=seat, name="a", description="d", body="b", trigger="inline")
    b = skills.create(seat=seat, name="b", description="d", body="b", trigger="inline")
    SynthesizedSkill.objects.filter(pk=b.pk).update(state=SynthesizedSkill.STALE)
    reflect_turn(make_turn(skills_offered=[a.pk, b.pk]).pk)
    a.refresh_from_db()
    b.refresh_from_db()
    assert (a.use_count, b.use_count) == (1, 1) and a.last_used_at is not None
    assert b.state == SynthesizedSkill.ACTIVE
    assert events.rows(SkillRevived, seat=seat).first().payload["skill_id"] == b.pk


def test_no_offered_skills_closes_the_gate(make_turn, ctx_of):
    assert skill_use.SkillUse().applies(ctx_of(make_turn())) == "no_offered_skills"


def test_run_writes_nothing_until_the_pass_runs_its_write(seat, make_turn, ctx_of):
    offered = skills.create(seat=seat, name="a", description="d", body="b", trigger="inline")

    write = skill_use.SkillUse().run(ctx_of(make_turn(skills_offered=[offered.pk])))

    assert SynthesizedSkill.objects.get(pk=offered.pk).use_count == 0
    assert callable(write) and write() == skill_use.Marked(marked=1)
    assert SynthesizedSkill.objects.get(pk=offered.pk).use_count == 1


def test_another_seats_skill_id_is_not_marked(seat, other_seat, make_turn):
    theirs = skills.create(seat=other_seat, name="x", description="d", body="b", trigger="inline")
    reflect_turn(make_turn(skills_offered=[theirs.pk]).pk)
    theirs.refresh_from_db()
    assert theirs.use_count == 0


def test_a_skill_loaded_with_use_skill_in_the_turn_counts_once(seat, make_turn):
    from learning import tools

    loaded = skills.create(seat=seat, name="fix-ci", description="d", body="b", trigger="inline")
    offered = skills.create(seat=seat, name="triage", description="d", body="b", trigger="inline")
    tools.run(seat=seat, name="use_skill", run_id="run-once", arguments={"name": "fix-ci"})
    reflect_turn(make_turn(run_id="run-once", skills_offered=[loaded.pk, offered.pk]).pk)
    loaded.refresh_from_db()
    offered.refresh_from_db()
    assert (loaded.use_count, offered.use_count) == (1, 1)
