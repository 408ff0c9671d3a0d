"""reflect_and_persist, refine_skill, use_skill, mark_onboarded, search_knowledge and the registry."""

import pytest
from django.db import OperationalError, connection

from core.models import Event
from crewlet.config import schema
from crewlet.errors import BadInput, Conflict, NotFound
from knowledge.pages import save_page
from learning import limits, tool_names, tools
from learning.memory import diary, onboarding, skills
from learning.models import DiaryEntry, SkillVersion, SynthesizedSkill
from learning.reflection.turn_context import self_persisted
from tests.learning.memory.rows import skill


def test_reflect_and_persist_stores_verbatim_and_marks_the_turn_self_persisted(seat, call):
    text = "Carol prefers links to the runbook over pasted steps.\n  (said twice)"
    result = call("reflect_and_persist", content=text, kind="long", run_id="turn-42")
    entry = DiaryEntry.objects.get(id=result.data["entry_id"])
    assert entry.content == text and entry.source == "reflect_and_persist" and entry.turn_id == "turn-42"
    assert self_persisted("turn-42", seat=seat) and not self_persisted("turn-43", seat=seat)


def test_a_new_long_note_is_never_the_caps_victim_and_the_reply_names_what_was_stored(seat, call, monkeypatch):
    monkeypatch.setattr(limits, "MAX_LONG_NOTES_PER_SEAT", 3)
    older = [call("reflect_and_persist", content=f"Fact {i}", kind="long", run_id=f"r{i}").data["entry_id"]
             for i in range(3)]
    diary.mark_used(older)  # every older note recalled once: the new note (use 0) is the least used
    result = call("reflect_and_persist", content="Dana owns the release train now", kind="long", run_id="r3")
    new_id = result.data["entry_id"]
    assert f"note {new_id}" in result.text
    assert DiaryEntry.objects.get(id=new_id).content == "Dana owns the release train now"
    assert DiaryEntry.objects.filter(seat=seat, kind=DiaryEntry.LONG).count() == 3
    assert DiaryEntry.objects.filter(id__in=older).count() == 2


def test_reflect_and_persist_embeds_outside_the_write_transaction(seat, call, monkeypatch):
    depth_at_start = len(connection.atomic_blocks)
    depths = []
    real_embed = diary.embed_one

    def spy(*args, **kwargs):
        depths.append(len(connection.atomic_blocks))
        return real_embed(*args, **kwargs)

    monkeypatch.setattr(diary, "embed_one", spy)
    result = call("reflect_and_persist", content="Eve reviews the schema changes", kind="long")
    assert DiaryEntry.objects.get(id=result.data["entry_id"]).embedding_model
    assert depths == [depth_at_start]


def test_a_note_the_diary_already_holds_is_not_saved_twice(seat, call):
    first = call("reflect_and_persist", content="Dana owns the release train now.", kind="long", run_id="r1")
    again = call("reflect_and_persist", content="dana owns the release  train now", kind="long", run_id="r2")
    assert again.ok and again.data["duplicate"] is True and again.data["entry_id"] == first.data["entry_id"]
    assert "already says this" in again.text
    assert DiaryEntry.objects.filter(seat=seat).count() == 1
    other = call("reflect_and_persist", content="Eve owns the release train now.", kind="long", run_id="r3")
    assert other.data.get("duplicate") is None and DiaryEntry.objects.filter(seat=seat).count() == 2


def test_reflect_and_persist_refuses_past_2000_characters_naming_the_limit(seat, call):
    with pytest.raises(BadInput) as err:
        call("reflect_and_persist", content="x" * 2001, kind="long")
    assert "2000" in err.value.message and "learning.MaxContentChars" in err.value.message
    assert err.value.extra["field"] == "arguments.content"
    assert DiaryEntry.objects.count() == 0 and not self_persisted("run-1", seat=seat)


def test_a_short_note_needs_a_ttl(seat, call):
    with pytest.raises(BadInput) as err:
        call("reflect_and_persist", content="Freeze this week", kind="short")
    assert err.value.extra["field"] == "arguments.ttl_days"
    result = call("reflect_and_persist", content="Freeze this week", kind="short", ttl_days=5)
    assert DiaryEntry.objects.get(id=result.data["entry_id"]).ttl_until is not None


def test_refine_skill_replaces_the_body_whole_and_versions_it(seat, call):
    skill(seat, "deploy", body="1. old step")
    result = call("refine_skill", skill_name="deploy", content="1. new step\n2. verify", reason="step 1 changed")
    row = SynthesizedSkill.objects.get(name="deploy")
    assert (row.body, row.version, result.data["version"]) == ("1. new step\n2. verify", 2, 2)
    archived = SkillVersion.objects.get(skill=row)
    assert archived.body == "1. old step" and archived.reason == "step 1 changed"
    assert Event.objects.filter(name="skill_refined", payload__source="refine_skill").count() == 1


def test_refine_skill_over_max_body_chars_is_refused_naming_the_field(seat, call):
    skill(seat, "deploy", body="ok")
    with pytest.raises(BadInput) as err:
        call("refine_skill", skill_name="deploy", content="z" * 20001)
    assert "max_body_chars" in err.value.message and err.value.extra["field"] == "arguments.content"
    assert SynthesizedSkill.objects.get(name="deploy").body == "ok"


def test_a_seat_may_refine_only_its_own_skills(seat, other_seat, call):
    skill(other_seat, "theirs", body="b")
    with pytest.raises(NotFound):
        call("refine_skill", skill_name="theirs", content="mine now")
    assert SynthesizedSkill.objects.get(name="theirs").body == "b"


def test_refine_skill_is_withdrawn_when_refinement_is_disabled(seat, call, serve_config):
    skill(seat, "deploy", body="ok")
    serve_config(learning=schema.Learning(skill_refinement=schema.SkillRefinement(enabled=False)))
    assert "refine_skill" not in [d["name"] for d in tools.definitions(seat)]
    with pytest.raises(NotFound, match="withdrawn"):
        call("refine_skill", skill_name="deploy", content="x")
    assert "use_skill" in [d["name"] for d in tools.definitions(seat)]  # reading is not changing


def test_the_builtins_named_below_the_tools_are_registered_ones(seat, serve_config):
    """The learning tools every builtin but search_knowledge, and a withdrawn name a registered one."""
    assert tool_names.LEARNING_TOOLS == set(tools.REGISTRY) - {"search_knowledge"}
    serve_config(learning=schema.Learning(skill_refinement=schema.SkillRefinement(enabled=False)))
    assert set(tool_names.withdrawn(seat)) == {"refine_skill"} <= set(tools.REGISTRY)


def test_use_skill_returns_the_body_verbatim_revives_stale_and_emits_skill_used(seat, call):
    body = "# deploy\n\n1. build\n2. ship  \n"
    skill(seat, "deploy", body=body, state=SynthesizedSkill.STALE)
    result = call("use_skill", name="deploy", run_id="turn-9")
    row = SynthesizedSkill.objects.get(name="deploy")
    assert result.text == body and result.data["revived"] is True
    assert row.state == SynthesizedSkill.ACTIVE and row.use_count == 1
    used = Event.objects.get(name="skill_used")
    assert used.turn_id == "turn-9" and used.payload["source_kind"] == "synthesized"


def test_use_skill_still_answers_the_body_when_its_use_stamp_cannot_be_written(seat, call, monkeypatch):
    body = "# deploy\n\n1. build\n2. ship\n"
    skill(seat, "deploy", body=body)

    def locked(*args, **kwargs):
        raise OperationalError("database is locked")

    monkeypatch.setattr(skills, "mark_used", locked)
    result = call("use_skill", name="deploy", run_id="turn-10")
    assert result.ok and result.text == body
    assert Event.objects.filter(name="skill_used", turn_id="turn-10").exists()


def test_use_skill_refuses_archived_and_unknown(seat, call):
    skill(seat, "old", state=SynthesizedSkill.ARCHIVED)
    with pytest.raises(Conflict, match="archived"):
        call("use_skill", name="old")
    with pytest.raises(NotFound):
        call("use_skill", name="nope")
    assert not Event.objects.filter(name="skill_used").exists()


def test_mark_onboarded_stamps_the_current_chain(seat, call):
    assert onboarding.onboarded_at(seat) is None
    call("mark_onboarded")
    assert onboarding.onboarded_at(seat) is not None


def test_search_knowledge_answers_honestly_with_and_without_a_backend(seat, call, serve_config, serve_native):
    serve_config(knowledge=schema.Knowledge(backend="none"))
    result = call("search_knowledge", query="signing key rotation", run_id="run-kb")
    assert not result.ok and "no knowledge backend is configured" in result.text
    save_page(container_key="ENG", title="Key rotation runbook", body="rotate the signing key quarterly")
    serve_native(scope=["ENG"])
    result = call("search_knowledge", query="  signing   key ", run_id="run-kb")
    assert result.ok and "Key rotation runbook" in result.text and result.data["query"] == "signing key"
    reads = Event.objects.filter(name="knowledge_read").order_by("id")
    assert [(e.turn_id, e.payload["served_mode"] != "") for e in reads] == [("run-kb", False), ("run-kb", True)]


def test_every_builtin_has_a_one_line_description_and_a_json_schema(seat):
    definitions = tools.definitions(seat)
    assert {d["name"] for d in definitions} == {"query_episodes", "reflect_and_persist", "refresh_memory",
                                                "refine_skill", "use_skill", "mark_onboarded", "search_knowledge"}
    for d in definitions:
        assert d["description"] and "\n" not in d["description"]
        assert d["parameters"]["type"] == "object" and d["parameters"]["additionalProperties"] is False


def test_unknown_arguments_are_refused_naming_the_field(seat, call):
    with pytest.raises(BadInput) as err:
        call("use_skill", name="x", bogus=1)
    assert err.value.extra["errors"][0]["field"] == "arguments.bogus"
