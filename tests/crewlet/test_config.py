"""crewlet.toml: refused by key path, kept on a bad edit, re-read without a restart, merged per role."""

from __future__ import annotations

import os
import typing
from pathlib import Path

import pytest

from crewlet import config
from crewlet.config import ConfigError, parse_text, schema
from crewlet.models import ConfigRevision, Seat

EXAMPLE = Path(__file__).resolve().parents[2] / "crewlet.toml.example"

BASE = """
[company]
name = "Hotco"

[providers.llm.offline]
kind = "offline"

[providers.embeddings]
kind = "hashing"
dimensions = 64

[learning.personal_memory]
max_refreshes_per_turn = {refreshes}

[units.eng]
name = "Engineering"

[roles.swe]
llm = ["offline"]
llm_auxiliary = ["offline"]

[roles.swe.skills.reflection]
min_tool_iterations = 8

[roles.swe.learning.skill_synthesis]
min_tool_calls = 2

[roles.sre]
llm = ["offline"]

[seats.ana]
role = "swe"
unit = "eng"
{extra}
"""


def toml(refreshes=3, extra=""):
    return BASE.format(refreshes=refreshes, extra=extra)


def refused_path(text: str) -> str:
    with pytest.raises(ConfigError) as raised:
        parse_text(text)
    return raised.value.path


@pytest.fixture
def from_file(settings, tmp_path):
    """Serve the config from a file (not the tests' pinned one); returns the file to edit."""
    path = tmp_path / "crewlet.toml"
    settings.CREWLET_CONFIG_PATH = str(path)
    config.use(None)
    return path


def write(path: Path, text: str) -> None:
    """Write and move the mtime on, so an edit within the filesystem's clock tick is still seen."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text, encoding="utf-8")
    if path.stat().st_mtime_ns <= before:
        os.utime(path, ns=(before + 1_000_000, before + 1_000_000))


# ---- validation names the key path ------------------------------------------------------------


def test_an_unknown_key_is_refused_naming_its_path():
    text = toml().replace("max_refreshes_per_turn", "max_refreshes")
    assert refused_path(text) == "learning.personal_memory.max_refreshes"
    with pytest.raises(ConfigError, match="unknown key"):
        parse_text(text)


def test_a_value_of_the_wrong_type_is_refused_naming_its_path():
    with pytest.raises(ConfigError, match="expected an integer") as raised:
        parse_text(toml(refreshes='"three"'))
    assert raised.value.path == "learning.personal_memory.max_refreshes_per_turn"
    assert str(raised.value).startswith("learning.personal_memory.max_refreshes_per_turn: ")


def test_a_wrong_type_inside_a_role_override_names_the_roles_path():
    text = toml().replace("min_tool_iterations = 8", 'min_tool_iterations = "eight"')
    assert refused_path(text) == "roles.swe.skills.reflection.min_tool_iterations"


@pytest.mark.parametrize("old, new, path", [
    ('kind = "offline"', 'kind = "gemini"', "providers.llm.offline.kind"),
    ('kind = "hashing"', 'kind = "word2vec"', "providers.embeddings.kind"),
    ('name = "Hotco"', 'name = "Hotco"\nbudget_window = "week"', "company.budget_window"),
])
def test_an_unknown_kind_is_refused_naming_its_path_and_the_known_kinds(old, new, path):
    with pytest.raises(ConfigError, match="known: ") as raised:
        parse_text(toml().replace(old, new, 1))
    assert raised.value.path == path


@pytest.mark.parametrize("kinds, seam", [
    (schema.LlmKind, "core.providers.llm.base.KINDS"),
    (schema.EmbeddingKind, "core.providers.embeddings.base.KINDS"),
    (schema.KnowledgeBackend, "knowledge.searcher.BACKENDS"),
    (schema.KnowledgeBackend, "knowledge.promotion_writer.WRITERS"),
])
def test_every_kind_the_config_accepts_is_one_its_seam_resolves(kinds, seam):
    from django.utils.module_loading import import_string

    resolvable, accepted = set(import_string(seam)), set(typing.get_args(kinds))
    assert accepted - {"none"} <= resolvable <= accepted  # "none" may resolve to nothing by design
    assert all(callable(import_string(path)) for path in import_string(seam).values())


def test_an_unknown_provider_alias_in_a_role_chain_is_refused_naming_the_chain_entry():
    text = toml().replace('llm_auxiliary = ["offline"]', 'llm_auxiliary = ["offline", "gpt"]')
    with pytest.raises(ConfigError, match="no provider named 'gpt'") as raised:
        parse_text(text)
    assert raised.value.path == "roles.swe.llm_auxiliary[1]"


def test_a_seat_naming_a_missing_role_is_refused():
    assert refused_path(toml(extra='[seats.bo]\nrole = "pm"')) == "seats.bo.role"


def test_a_seat_naming_a_missing_unit_is_refused():
    assert refused_path(toml(extra='[seats.bo]\nrole = "swe"\nunit = "sales"')) == "seats.bo.unit"


def test_a_file_that_is_not_toml_is_refused_saying_so():
    with pytest.raises(ConfigError, match="not valid TOML"):
        parse_text(toml() + "\n[seats.bo\n")


def test_the_example_file_parses_and_applies(db):
    cfg = parse_text(EXAMPLE.read_text())
    assert cfg.providers.embeddings.kind == "local"
    config.apply_text(EXAMPLE.read_text(), path=str(EXAMPLE))
    assert set(Seat.objects.values_list("handle", flat=True)) == set(cfg.seats)


# ---- revisions --------------------------------------------------------------------------------


def test_a_refused_text_leaves_the_previous_revision_serving(from_file, db):
    config.apply_text(toml(refreshes=4))
    revisions = ConfigRevision.objects.count()
    with pytest.raises(ConfigError):
        config.apply_text(toml(refreshes=-1))
    assert config.current().learning.personal_memory.max_refreshes_per_turn == 4
    assert ConfigRevision.objects.count() == revisions


def test_a_config_change_is_picked_up_without_restart(from_file, db):
    write(from_file, toml(refreshes=3))
    assert config.current().learning.personal_memory.max_refreshes_per_turn == 3
    first = ConfigRevision.objects.count()

    write(from_file, toml(refreshes=5, extra='[seats.bo]\nrole = "sre"\nunit = "eng"'))
    assert config.current().learning.personal_memory.max_refreshes_per_turn == 5
    assert ConfigRevision.objects.count() == first + 1
    assert ConfigRevision.objects.first().path == str(from_file)
    assert Seat.objects.get(handle="bo").role.name == "sre"


def test_an_invalid_edit_keeps_the_old_config_and_names_the_key(from_file, db):
    write(from_file, toml(refreshes=3))
    config.current()
    revision, revisions = config.revision(), ConfigRevision.objects.count()

    write(from_file, toml(refreshes=3).replace("max_refreshes_per_turn", "max_refreshz"))
    assert config.current().learning.personal_memory.max_refreshes_per_turn == 3
    assert config.revision() == revision
    assert ConfigRevision.objects.count() == revisions
    assert "learning.personal_memory.max_refreshz" in config.last_error()

    write(from_file, toml(refreshes=6))
    assert config.current().learning.personal_memory.max_refreshes_per_turn == 6
    assert config.last_error() == ""


def test_an_unchanged_file_is_not_applied_again(from_file, db):
    write(from_file, toml())
    config.current()
    config.current()
    assert ConfigRevision.objects.count() == 1


# ---- per-role overrides -----------------------------------------------------------------------


def test_role_overrides_are_merged_over_the_defaults(from_file, db):
    write(from_file, toml())
    config.current()
    ana = Seat.objects.get(handle="ana")
    knobs = config.knobs_for_seat(ana)
    assert knobs.skills.reflection.min_tool_iterations == 8  # the role's
    assert knobs.skills.reflection.cooldown_secs == 3600  # the default beside it
    assert knobs.learning.skill_synthesis.min_tool_calls == 2
    assert knobs.learning.skill_synthesis.max_skills_per_agent == 50
    assert knobs.learning.personal_memory.max_refreshes_per_turn == 3


def test_a_role_without_overrides_serves_the_defaults(from_file, db):
    write(from_file, toml(extra='[seats.dee]\nrole = "sre"'))
    config.current()
    knobs = config.knobs_for_seat(Seat.objects.get(handle="dee"))
    assert knobs.skills.reflection.min_tool_iterations == 10
    assert knobs.learning.skill_synthesis.min_tool_calls == 5


def test_an_undecodable_file_is_refused_like_any_invalid_file_and_the_old_revision_serves(from_file, db):
    write(from_file, toml(refreshes=3))
    assert config.current().learning.personal_memory.max_refreshes_per_turn == 3
    revision, revisions = config.revision(), ConfigRevision.objects.count()
    before = from_file.stat().st_mtime_ns
    from_file.write_bytes(toml(refreshes=7).encode() + b"\n# caf\xe9\n")
    os.utime(from_file, ns=(before + 1_000_000, before + 1_000_000))
    assert config.current().learning.personal_memory.max_refreshes_per_turn == 3  # no exception, old revision
    assert config.revision() == revision and ConfigRevision.objects.count() == revisions
    assert "not UTF-8" in config.last_error()


def test_an_empty_file_is_refused_not_applied_as_every_default(from_file, db):
    from crewlet.models import Company

    write(from_file, toml(refreshes=3))
    config.current()
    companies, revisions = set(Company.objects.values_list("name", flat=True)), ConfigRevision.objects.count()
    write(from_file, "")
    assert config.current().learning.personal_memory.max_refreshes_per_turn == 3
    assert "empty" in config.last_error() and ConfigRevision.objects.count() == revisions
    assert set(Company.objects.values_list("name", flat=True)) == companies
    with pytest.raises(ConfigError, match="empty"):
        parse_text("  \n")


# ---- ranges, allowed values and TOML's own types: each refusal names its key path ------------------------

LOCAL = 'kind = "local"'
BAD_VALUES = [
    # the three
    ("[learning.skill_synthesis]\nduplicate_jaccard_threshold = 5.0",
     "learning.skill_synthesis.duplicate_jaccard_threshold", "must be at most 1.0, got 5.0"),
    ("[learning.skill_curator]\ninterval_hours = 0", "learning.skill_curator.interval_hours", "must be at least 1, got 0"),
    (('kind = "hashing"\ndimensions = 64', f"{LOCAL}\nmax_input_chars = 5000"),
     "providers.embeddings.max_input_chars", "at most 600 for kind 'local'"),
    # the spec's rule: the duplicate check is stricter than pooling (also in a role's override)
    ("[learning.skill_synthesis]\nduplicate_jaccard_threshold = 0.5\ncluster_jaccard_threshold = 0.7",
     "learning.skill_synthesis.duplicate_jaccard_threshold", "must not be below cluster_jaccard_threshold"),
    (("min_tool_calls = 2", "min_tool_calls = 2\ncluster_jaccard_threshold = 0.9"),
     "roles.swe.learning.skill_synthesis.duplicate_jaccard_threshold", "must not be below cluster_jaccard_threshold"),
    # ours
    ("[learning.skill_synthesis]\ncluster_jaccard_threshold = -0.1",
     "learning.skill_synthesis.cluster_jaccard_threshold", "must be at least 0.0"),
    ("[transcripts.ladder]\nrejected_similarity = 1.5", "transcripts.ladder.rejected_similarity", "must be at most 1.0"),
    ("[learning.skill_synthesis]\ncluster_min_size = 1", "learning.skill_synthesis.cluster_min_size",
     "must be at least 2"),
    ("[learning.episode_lifecycle]\ninterval_seconds = 30", "learning.episode_lifecycle.interval_seconds",
     "must be at least 60"),
    ("[learning.skill_synthesis]\nscheduler_interval_seconds = 10",
     "learning.skill_synthesis.scheduler_interval_seconds", "must be at least 60"),
    ("[learning.skill_refinement]\nmax_versions_kept = 0", "learning.skill_refinement.max_versions_kept",
     "must be at least 1"),
    ("[learning]\nsummarize_max_tokens = 0", "learning.summarize_max_tokens", "must be at least 1"),
    (("min_tool_iterations = 8", "min_tool_iterations = 0"), "roles.swe.skills.reflection.min_tool_iterations",
     "must be at least 1"),
    (("dimensions = 64", "max_input_chars = 50"), "providers.embeddings.max_input_chars", "must be at least 100"),
    (("dimensions = 64", "max_input_chars = 40000"), "providers.embeddings.max_input_chars", "must be at most 32000"),
    (('kind = "offline"', 'kind = "offline"\ntimeout_seconds = 0'), "providers.llm.offline.timeout_seconds",
     "must be above 0.0"),
    (('kind = "offline"', 'kind = "offline"\ntimeout_seconds = 7200'), "providers.llm.offline.timeout_seconds",
     "must be at most 3600.0"),
    # TOML's types, no coercion
    ("[learning.skill_curator]\ninterval_hours = 3.0", "learning.skill_curator.interval_hours",
     "expected an integer, got 3.0"),
    ("[learning.skill_refinement]\nenabled = \"yes\"", "learning.skill_refinement.enabled",
     "expected true or false, got 'yes'"),
    ("[learning.skill_refinement]\nenabled = 1", "learning.skill_refinement.enabled", "expected true or false, got 1"),
    ('[seats.bo]\nrole = "swe"\nactive = "no"', "seats.bo.active", "expected true or false, got 'no'"),
    ('[roles.ops]\nlearning_enabled = "maybe"', "roles.ops.learning_enabled", 'expected true, false or "inherit"'),
    ('[knowledge]\nscope = "ENG"', "knowledge.scope", "expected a list"),
    ('[knowledge.confluence]\ncloud = "yes"', "knowledge.confluence.cloud", 'expected true, false or "auto"'),
    (('name = "Hotco"', 'name = "Hotco"\nbudget_window = "week"'), "company.budget_window",
     "unknown value 'week' (known: day, month)"),
]


def edited(edit) -> str:
    if isinstance(edit, tuple):
        old, new = edit
        assert old in toml()
        return toml().replace(old, new, 1)
    return toml() + "\n" + edit + "\n"


@pytest.mark.parametrize("edit, path, message", BAD_VALUES, ids=[case[1] for case in BAD_VALUES])
def test_a_bad_value_is_refused_naming_its_key_path_and_why(edit, path, message):
    with pytest.raises(ConfigError) as raised:
        parse_text(edited(edit))
    assert [(p.path, message in p.reason) for p in raised.value.problems] == [(path, True)], raised.value.problems
    assert f"{path}: " in str(raised.value)


def test_the_values_just_inside_the_ranges_are_accepted():
    cfg = parse_text(edited(('kind = "hashing"\ndimensions = 64', f"{LOCAL}\nmax_input_chars = 600"))
                     + "[learning.skill_synthesis]\nduplicate_jaccard_threshold = 0.6\ncluster_min_size = 2\n"
                       "[learning.skill_curator]\ninterval_hours = 1\n[learning.episode_lifecycle]\ninterval_seconds = 60\n")
    assert cfg.providers.embeddings.max_input_chars == 600
    assert cfg.learning.skill_synthesis.duplicate_jaccard_threshold == 0.6
    assert cfg.learning.skill_curator.interval_hours == 1 and cfg.learning.episode_lifecycle.interval_seconds == 60


def test_every_refused_key_is_listed_not_just_the_first():
    text = edited(('kind = "hashing"\ndimensions = 64', f"{LOCAL}\nmax_input_chars = 5000")).replace(
        "max_refreshes_per_turn", "max_refresh_per_turn") + (
        "\n[learning.skill_synthesis]\nduplicate_jaccard_threshold = 5.0\n"
        "[learning.skill_curator]\ninterval_hours = 0\n"
        '[seats.bo]\nrole = "pm"\n')
    with pytest.raises(ConfigError) as raised:
        parse_text(text)
    paths = [p.path for p in raised.value.problems]
    assert sorted(paths) == sorted([
        "learning.personal_memory.max_refresh_per_turn",
        "learning.skill_synthesis.duplicate_jaccard_threshold",
        "learning.skill_curator.interval_hours",
        "providers.embeddings.max_input_chars",
        "seats.bo.role",
    ])
    assert all(f"{path}: " in str(raised.value) for path in paths)


@pytest.mark.parametrize("edit, path, suggestion", [
    (("max_refreshes_per_turn", "max_refresh_per_turn"), "learning.personal_memory.max_refresh_per_turn",
     "max_refreshes_per_turn"),
    ("[learning.skill_curator]\ninterval_hour = 12", "learning.skill_curator.interval_hour", "interval_hours"),
    (('kind = "offline"', 'kind = "openai"'), "providers.llm.offline.kind", "openai_compat"),
    (('kind = "hashing"', 'kind = "hashng"'), "providers.embeddings.kind", "hashing"),
    ('[seats.bo]\nrole = "swee"', "seats.bo.role", "swe"),
    ('[seats.bo]\nrole = "swe"\nunit = "engg"', "seats.bo.unit", "eng"),
    (('llm_auxiliary = ["offline"]', 'llm_auxiliary = ["ofline"]'), "roles.swe.llm_auxiliary[0]", "offline"),
])
def test_a_misspelt_key_kind_unit_role_or_provider_gets_a_did_you_mean(edit, path, suggestion):
    with pytest.raises(ConfigError) as raised:
        parse_text(edited(edit))
    assert raised.value.path == path
    assert f"did you mean `{suggestion}`?" in raised.value.reason


def test_an_unknown_key_far_from_any_known_one_gets_no_guess():
    with pytest.raises(ConfigError) as raised:
        parse_text(toml() + "\n[learning.skill_curator]\nbananas = 1\n")
    assert "did you mean" not in raised.value.reason and "unknown key" in raised.value.reason


@pytest.mark.parametrize("written, stored", [("true", True), ("false", False), ('"inherit"', None), ('"false"', False)])
def test_a_roles_learning_switch_is_a_toml_boolean_or_inherit(written, stored, db):
    text = toml().replace('[roles.sre]\nllm = ["offline"]', f'[roles.sre]\nllm = ["offline"]\nlearning_enabled = {written}')
    cfg = parse_text(text)
    assert cfg.roles["sre"].learning_enabled == ("inherit" if stored is None else stored)
    config.apply_text(text)
    from crewlet.models import Role

    assert Role.objects.get(name="sre").learning_enabled is stored


def test_the_companys_learning_switch_takes_no_quoted_boolean():
    with pytest.raises(ConfigError, match="expected true or false") as raised:
        parse_text(toml().replace('name = "Hotco"', 'name = "Hotco"\nlearning_enabled = "false"'))
    assert raised.value.path == "company.learning_enabled"


# ---- the JSON Schema for editors -------------------------------------------------------------------------


def schema_document() -> dict:
    import io
    import json

    from django.core.management import call_command

    out = io.StringIO()
    call_command("config_schema", stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.parametrize("example", [EXAMPLE, EXAMPLE.parent / "examples" / "agent_loop" / "service.toml"],
                         ids=lambda p: p.name)
def test_config_schema_prints_a_draft_2020_12_schema_the_examples_validate_against(example):
    import tomllib

    import jsonschema

    document = schema_document()
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(document)
    jsonschema.Draft202012Validator(document).validate(tomllib.loads(example.read_text()))
    parse_text(example.read_text())  # and the service takes it


def test_the_schema_carries_ranges_allowed_values_descriptions_and_no_unknown_keys():
    import tomllib

    import jsonschema

    document = schema_document()
    curator = document["$defs"]["SkillCurator"]
    assert curator["additionalProperties"] is False
    assert curator["properties"]["interval_hours"]["minimum"] == 1
    assert curator["properties"]["interval_hours"]["description"] == "Hours between curator runs."
    assert document["$defs"]["EmbeddingSpec"]["properties"]["kind"]["enum"] == list(typing.get_args(schema.EmbeddingKind))
    validator = jsonschema.Draft202012Validator(document)
    data = tomllib.loads(toml() + "\n[learning.skill_curator]\ninterval_hours = 0\nintervl = 3\n")
    messages = sorted(error.message for error in validator.iter_errors(data))
    assert messages == ["0 is less than the minimum of 1", "Additional properties are not allowed ('intervl' was unexpected)"]
    override = tomllib.loads(toml().replace("min_tool_calls = 2", "min_tool_calls = 0"))
    assert [e.json_path for e in validator.iter_errors(override)] == ["$.roles.swe.learning.skill_synthesis.min_tool_calls"]


def test_a_roles_override_is_checked_against_the_files_own_tables_not_the_defaults():
    text = toml().replace("min_tool_calls = 2", "min_tool_calls = 2\ncluster_jaccard_threshold = 0.9") + (
        "\n[learning.skill_synthesis]\nduplicate_jaccard_threshold = 0.95\n")
    cfg = parse_text(text)  # 0.95 (the file's) is not below the role's 0.9
    assert cfg.roles["swe"].learning["skill_synthesis"]["cluster_jaccard_threshold"] == 0.9


def test_a_roles_override_is_judged_on_what_it_sets_when_the_files_tables_are_refused():
    base = "\n[learning.skill_synthesis]\nduplicate_jaccard_threshold = 0.95\nscheduler_enabled = \"yes\"\n"
    fine = toml().replace("min_tool_calls = 2", "min_tool_calls = 2\ncluster_jaccard_threshold = 0.9") + base
    with pytest.raises(ConfigError) as raised:
        parse_text(fine)
    # the file's own refusal only: not a false "duplicate below cluster" from the defaults' 0.8
    assert [p.path for p in raised.value.problems] == ["learning.skill_synthesis.scheduler_enabled"]
    bad = toml().replace("min_tool_calls = 2", "min_tool_calls = 0") + base
    with pytest.raises(ConfigError) as raised:
        parse_text(bad)
    assert sorted(p.path for p in raised.value.problems) == [
        "learning.skill_synthesis.scheduler_enabled", "roles.swe.learning.skill_synthesis.min_tool_calls"]
