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


# ---- every number has an upper bound the code can store and compute with ---------------------------


def _numeric_fields(cls, prefix=""):
    import dataclasses

    for field in dataclasses.fields(cls):
        hint = typing.get_type_hints(cls)[field.name]
        if dataclasses.is_dataclass(hint):
            yield from _numeric_fields(hint, f"{prefix}{field.name}.")
        elif hint in (int, float):
            yield f"{prefix}{field.name}", field


def test_every_numeric_knob_has_an_upper_bound():
    tables = [schema.Config, schema.ProviderSpec, schema.CompanySpec, schema.RoleSpec, schema.SeatSpec]
    unbounded = [path for cls in tables for path, field in _numeric_fields(cls)
                 if not any(hasattr(m, "le") or hasattr(m, "lt") for m in field.default.metadata)]
    assert len(list(_numeric_fields(schema.Config))) > 40
    assert unbounded == []


@pytest.mark.parametrize("table, key, value", [
    ("learning.skill_curator", "stale_after_days", 740000),  # the curator's now - timedelta(days=...)
    ("learning.skill_curator", "interval_hours", 9223372036854775807),  # django-q2's schedule minutes
    ("learning.promotion", "interval_hours", 547),
    ("learning.episode_lifecycle", "interval_seconds", 32_768 * 60),
    ("learning.episode_lifecycle", "tool_free_max_age_days", 10**9),
    ("company", "token_budget", 2**63),
])
def test_a_knob_past_what_the_code_computes_with_is_refused_by_its_path(table, key, value):
    text = toml() + f"\n[{table}]\n{key} = {value}\n"
    if table == "company":
        text = toml().replace('name = "Hotco"', f'name = "Hotco"\n{key} = {value}')
    with pytest.raises(ConfigError) as refused:
        parse_text(text)
    assert refused.value.problems[0].path == f"{table}.{key}"
    assert refused.value.problems[0].reason.startswith("must be at most")


def test_the_largest_accepted_cadences_and_ages_run_the_curator_and_install_the_schedules(db):
    from django_q.models import Schedule

    from learning.passes import curator, schedules

    cfg = parse_text(toml() + "\n[learning.skill_curator]\ninterval_hours = 546\nstale_after_days = 36500\n"
                              "archive_after_days = 36500\n[learning.promotion]\ninterval_hours = 546\n"
                              "[learning.episode_lifecycle]\ninterval_seconds = 1966020\n")
    config.use(cfg)
    config.apply_text(toml())  # the org the passes walk
    config.use(cfg)
    schedules.install(cfg=cfg)
    assert Schedule.objects.get(name="learning.curator").minutes == 546 * 60
    assert Schedule.objects.get(name="learning.lifecycle").minutes == 32_767
    curator.run_curator()


@pytest.mark.parametrize("where", ['name = "Acme\\u0000Robotics"', 'display_name = "a\\u0000b"'])
def test_a_nul_character_is_refused_naming_its_key_and_nothing_is_applied(where, db):
    text = toml().replace('name = "Hotco"', where) if where.startswith("name") else toml().replace(
        'unit = "eng"', f'unit = "eng"\n{where}')
    path = "company.name" if where.startswith("name") else "seats.ana.display_name"
    with pytest.raises(ConfigError) as refused:
        config.apply_text(text)
    assert str(refused.value) == f"{path}: contains a NUL character (\\u0000), which cannot be stored"
    assert not ConfigRevision.objects.exists()


@pytest.mark.parametrize("edit, path", [
    (('[seats.ana]', '[seats."ana smith"]'), "seats.ana smith"),
    (('name = "Hotco"', f'name = "{"x" * 201}"'), "company.name"),
])
def test_a_name_the_org_tables_cannot_store_is_refused(edit, path):
    with pytest.raises(ConfigError) as refused:
        parse_text(toml().replace(*edit))
    assert refused.value.problems[0].path == path


# ---- a process never serves the defaults in place of an invalid file ---------------------------------


def test_a_process_starting_on_an_invalid_file_refuses_to_serve_and_says_why(from_file, db, caplog):
    from django.core.management import call_command
    from django.core.management.base import SystemCheckError

    from crewlet.config.runtime import ConfigUnusable

    write(from_file, toml().replace("max_refreshes_per_turn", "max_refreshz"))
    with pytest.raises(ConfigUnusable, match="learning.personal_memory.max_refreshz"):
        config.current()
    with pytest.raises(ConfigUnusable):  # on every later use too: never the defaults
        config.knobs()
    assert not ConfigRevision.objects.exists()
    assert "no earlier revision to serve" in caplog.text and "keeps serving" not in caplog.text
    with pytest.raises(SystemCheckError, match="crewlet.E001"):  # every manage.py command checks it first
        call_command("check")


def test_the_wsgi_application_refuses_to_load_on_an_invalid_file(tmp_path):
    import subprocess
    import sys

    bad = tmp_path / "crewlet.toml"
    bad.write_text(toml().replace("max_refreshes_per_turn", "max_refreshz"), encoding="utf-8")
    env = {**os.environ, "CREWLET_CONFIG": str(bad)}
    done = subprocess.run([sys.executable, "-c", "import crewlet.wsgi"], env=env, capture_output=True, text=True,
                          cwd=EXAMPLE.parent, timeout=120)
    assert done.returncode != 0
    assert "ConfigUnusable" in done.stderr and "learning.personal_memory.max_refreshz" in done.stderr


def test_a_later_invalid_file_keeps_the_serving_revision_and_the_log_names_it(from_file, db, caplog):
    write(from_file, toml(refreshes=3))
    config.current()
    serving = config.revision()
    write(from_file, toml(refreshes=3).replace("max_refreshes_per_turn", "max_refreshz"))
    assert config.current().learning.personal_memory.max_refreshes_per_turn == 3
    assert f"revision {serving[:12]} keeps serving" in caplog.text


# ---- one revision row per change, naming who applied it ------------------------------------------------


def test_processes_reloading_an_unchanged_file_record_one_revision(from_file, db):
    write(from_file, toml())
    for _process in range(3):  # three processes start on the same file
        config.use(None)
        config.current()
    assert ConfigRevision.objects.count() == 1
    write(from_file, toml(refreshes=4))
    config.current()
    assert ConfigRevision.objects.count() == 2


def test_a_revision_read_from_the_file_names_the_command_and_os_user(from_file, db):
    import getpass

    write(from_file, toml())
    config.current()
    revision = ConfigRevision.objects.get()
    assert revision.applied_by is None
    assert revision.applied_via.startswith("file read by ") and f"(OS user {getpass.getuser()})" in revision.applied_via


# ---- where data is sent and which secrets are read: the operator's allowlist -------------------------

EVIL = '\n[providers.llm.evil]\nkind = "openai_compat"\nbase_url = "http://127.0.0.1:19999/v1"\napi_key_env = "DJANGO_SECRET_KEY"\n'


def test_a_provider_host_or_secret_variable_off_the_allowlist_is_refused_saying_why(db, settings):
    settings.CREWLET_ALLOWED_PROVIDER_HOSTS, settings.CREWLET_ALLOWED_SECRET_ENV = ["llm.internal"], ["OPENAI_API_KEY"]
    with pytest.raises(ConfigError) as refused:
        config.apply_text(toml() + EVIL)
    assert {str(p) for p in refused.value.problems} == {
        "providers.llm.evil.base_url: 127.0.0.1:19999 is not an allowed provider host; the operator lists hosts in "
        "CREWLET_ALLOWED_PROVIDER_HOSTS",
        "providers.llm.evil.api_key_env: 'DJANGO_SECRET_KEY' is not an allowed secret variable; the operator lists "
        "them in CREWLET_ALLOWED_SECRET_ENV",
    }
    assert not ConfigRevision.objects.exists()


@pytest.mark.parametrize("addition, path", [
    ('\n[providers.llm.openai]\nkind = "openai_compat"\n', "providers.llm.openai.base_url"),  # the SDK's own host
    ('\n[knowledge.confluence]\nurl = "https://wiki.example.org"\n', "knowledge.confluence.url"),
    ('\n[knowledge.confluence]\ntoken_env = "HOME"\n', "knowledge.confluence.token_env"),
    ('\n[seats.bo.mcp_env]\nCONFLUENCE_TOKEN = "DJANGO_SECRET_KEY"\n', "seats.bo.mcp_env.CONFLUENCE_TOKEN"),
])
def test_every_endpoint_and_secret_variable_is_held_to_the_allowlist(addition, path, db):
    with pytest.raises(ConfigError) as refused:
        config.apply_text(toml() + addition)
    assert [p.path for p in refused.value.problems] == [path]


def test_an_allowlisted_provider_is_applied(db, settings):
    settings.CREWLET_ALLOWED_PROVIDER_HOSTS = ["127.0.0.1:19999"]
    settings.CREWLET_ALLOWED_SECRET_ENV = ["DJANGO_SECRET_KEY"]
    config.apply_text(toml() + EVIL)
    assert config.current().providers.llm["evil"].base_url == "http://127.0.0.1:19999/v1"
    settings.CREWLET_ALLOWED_PROVIDER_HOSTS = ["127.0.0.1:8080"]  # another port of the host is another host
    with pytest.raises(ConfigError, match="127.0.0.1:19999 is not an allowed provider host"):
        config.apply_text(toml(refreshes=4) + EVIL)


def test_a_file_the_database_refuses_keeps_the_serving_revision_and_later_calls_answer(from_file, db, monkeypatch):
    from django.db import DataError

    from crewlet.config import apply

    write(from_file, toml(refreshes=3))
    config.current()
    serving = config.revision()
    real = apply.apply_to_org

    def refuse(cfg):
        raise DataError("value too long")

    monkeypatch.setattr(apply, "apply_to_org", refuse)
    write(from_file, toml(refreshes=5))
    for _call in range(2):  # the process keeps answering: no error per request
        assert config.current().learning.personal_memory.max_refreshes_per_turn == 3
    assert config.revision() == serving and "the database refused it" in config.last_error()
    monkeypatch.setattr(apply, "apply_to_org", real)
