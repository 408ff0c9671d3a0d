from datetime import timedelta

import pytest
from django.utils import timezone

from core import events
from core.event_types import AdminAction
from core.providers.embeddings import embed_one
from crewlet.errors import Forbidden
from learning import limits, procedures
from learning.memory import diary, skill_actions, skills
from learning.models import DiaryEntry, Episode, SkillVersion, SynthesizedSkill


def test_note_over_limit_is_refused_naming_the_limit(seat):
    with pytest.raises(limits.LimitExceeded) as err:
        diary.write(seat=seat, content="x" * 2001, kind=DiaryEntry.LONG)
    assert "2000" in str(err.value) and "learning.MaxContentChars" in str(err.value)
    assert DiaryEntry.objects.count() == 0


def test_note_at_limit_is_stored_verbatim_with_its_vector(seat):
    text = "y " * 1000
    entry = diary.write(seat=seat, content=text, kind=DiaryEntry.LONG)
    entry.refresh_from_db()
    assert entry.content == text and entry.embedding_model == "hashing-256" and entry.embedding_dim == 256


def test_expired_short_note_is_excluded_by_reads_and_swept(seat):
    past = timezone.now() - timedelta(days=3)
    diary.write(seat=seat, content="Sprint freeze runs through Friday", kind=DiaryEntry.SHORT, ttl_days=1, now=past)
    kept = diary.write(seat=seat, content="User prefers digests", kind=DiaryEntry.LONG)
    assert [e.id for e in diary.recent(seat=seat)] == [kept.id]
    vec = embed_one("Sprint freeze").vector
    assert all(e.kind == DiaryEntry.LONG for e in diary.recall(seat=seat, vector=vec, model="hashing-256"))
    assert diary.sweep_expired() == 1
    assert DiaryEntry.objects.count() == 1


def test_long_cap_evicts_least_retrieved_then_least_recent_then_oldest(seat):
    now = timezone.now()
    base = [
        DiaryEntry(seat=seat, kind=DiaryEntry.LONG, content=f"n{i}", created_at=now - timedelta(days=10 - i))
        for i in range(4)
    ]
    DiaryEntry.objects.bulk_create(base)
    rows = list(DiaryEntry.objects.order_by("created_at"))
    # n0 oldest but used twice; n1 used once long ago; n2 used once recently; n3 never used
    DiaryEntry.objects.filter(id=rows[0].id).update(use_count=2, last_retrieved_at=now)
    DiaryEntry.objects.filter(id=rows[1].id).update(use_count=1, last_retrieved_at=now - timedelta(days=5))
    DiaryEntry.objects.filter(id=rows[2].id).update(use_count=1, last_retrieved_at=now)
    assert diary.enforce_long_cap(seat, cap=3) == 1
    assert not DiaryEntry.objects.filter(content="n3").exists()
    assert diary.enforce_long_cap(seat, cap=2) == 1
    assert not DiaryEntry.objects.filter(content="n1").exists()
    assert set(DiaryEntry.objects.values_list("content", flat=True)) == {"n0", "n2"}


def test_hybrid_candidates_union_recall_and_recent_deduped(seat):
    old = diary.write(seat=seat, content="Use semantic commit messages on every PR", kind=DiaryEntry.LONG,
                      now=timezone.now() - timedelta(days=400))
    for i in range(60):
        diary.write(seat=seat, content=f"Filler observation number {i} about lunch", kind=DiaryEntry.LONG)
    topical = diary.write(seat=seat, content="The billing export runs nightly at 02:00", kind=DiaryEntry.LONG,
                          now=timezone.now() - timedelta(days=300))
    vec = embed_one("when does the billing export run").vector
    pool = diary.candidates(seat=seat, vector=vec, model="hashing-256")
    ids = [e.id for e in pool]
    assert topical.id in ids and len(ids) == len(set(ids)) and len(ids) <= 100
    assert old.id not in [e.id for e in diary.recent(seat=seat)]


def test_skill_revision_archives_prior_version_and_bounds_history(seat, serve_config):
    from crewlet.config import schema

    serve_config(learning=schema.Learning(skill_refinement=schema.SkillRefinement(max_versions_kept=2)))
    skill = skills.create(seat=seat, name="deploy", description="d", body="v1", trigger="inline")
    for i in range(2, 6):
        skill = skills.revise(skill=skill, body=f"v{i}")
    assert skill.version == 5 and skill.body == "v5"
    assert list(SkillVersion.objects.filter(skill=skill).values_list("version", flat=True)) == [4, 3]


def test_rollback_is_a_forward_step_audited_naming_the_seat(seat):
    skill = skills.create(seat=seat, name="deploy", description="d", body="one", trigger="inline")
    skill = skills.revise(skill=skill, body="two")
    skill = skill_actions.rollback(skill=skill, to_version=1, actor=seat)
    assert (skill.version, skill.body) == (3, "one")
    skill = skill_actions.rollback(skill=skill, to_version=2, actor=seat)
    assert (skill.version, skill.body) == (4, "two")
    audits = [r.event for r in events.recorded(AdminAction, seat=seat)]
    assert [(a.user, a.action, a.detail["to_version"]) for a in audits] == [("agent:ana", "rollback", 2), ("agent:ana", "rollback", 1)]
    assert skill.versions.get(version=3).actor == "agent:ana"


def test_a_seat_cannot_act_on_another_seats_skill_nor_a_person_without_the_permission(seat, other_seat, django_user_model):
    skill = skills.create(seat=seat, name="deploy", description="d", body="one", trigger="inline")
    visitor = django_user_model.objects.create_user("visitor", password="x", is_staff=True)
    for action in (skill_actions.pin, skill_actions.archive):
        with pytest.raises(Forbidden, match="another seat"):
            action(skill=skill, actor=other_seat)
        with pytest.raises(Forbidden, match="change_synthesizedskill"):
            action(skill=skill, actor=visitor)
    skill.refresh_from_db()
    assert not skill.pinned and skill.state == SynthesizedSkill.ACTIVE
    assert not events.rows(AdminAction).exists()


def test_skill_body_over_cap_is_refused_naming_the_field(seat):
    skill = skills.create(seat=seat, name="deploy", description="d", body="ok", trigger="inline")
    with pytest.raises(limits.LimitExceeded, match="max_body_chars"):
        skills.revise(skill=skill, body="z" * 20001)


def test_marking_a_stale_skill_used_revives_it(seat):
    skill = skills.create(seat=seat, name="deploy", description="d", body="b", trigger="inline")
    SynthesizedSkill.objects.filter(id=skill.id).update(state=SynthesizedSkill.STALE)
    skills.mark_used([skill.id], seat=seat)
    skill.refresh_from_db()
    assert skill.state == SynthesizedSkill.ACTIVE and skill.use_count == 1 and skill.last_used_at is not None


def test_jaccard_is_order_insensitive():
    assert procedures.jaccard(["a", "b", "c"], ["c", "a", "b"]) == 1.0
    assert procedures.jaccard(["a", "b"], ["b", "c"]) == pytest.approx(1 / 3)


def test_episode_similarity_reads_raw_rows_only(seat):
    from learning.memory import episodes

    now = timezone.now()
    vec = embed_one("deploy the billing service").vector
    for kind in (Episode.RAW, Episode.COMPACTED):
        ep = Episode(seat=seat, kind=kind, task_summary="deploy the billing service", started_at=now, ended_at=now)
        ep.set_vector(vec, "hashing-256")
        ep.save()
    hits = episodes.recall(seat=seat, vector=vec, model="hashing-256").turns
    assert [h.kind for h in hits] == [Episode.RAW]
    assert {e.kind for e in episodes.recent(seat=seat)} == {Episode.RAW, Episode.COMPACTED}


def test_the_recency_read_leaves_the_notes_vectors_unread(seat):
    diary.write(seat=seat, content="The billing export runs nightly", kind=DiaryEntry.LONG)
    (entry,) = diary.recent(seat=seat)
    assert entry.content == "The billing export runs nightly"
    assert "embedding" in entry.get_deferred_fields()  # the prefetch's pool never reads a note's vector
