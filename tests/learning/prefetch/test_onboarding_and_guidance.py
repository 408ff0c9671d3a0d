"""First-turn onboarding until mark_onboarded (chain-hash invalidation) and tool-skill guidance."""

from dataclasses import replace

import pytest

from core.models import Event
from crewlet.config import schema
from knowledge.models import Page
from knowledge.pages import save_page
from learning.memory import onboarding
from learning.prefetch import tool_skills
from tests.factories import UnitFactory
from tests.fakes.confluence_server import closed_port_url

from .conftest import block

SPEC_SIX = {
    "reflect-and-persist": ("reflect_and_persist",),
    "refine-skill": ("refine_skill",),
    "retrieval-research": ("query_episodes", "refresh_memory", "confluence_search"),
    "observed-directives": ("mattermost_post_message",),
    "getting-unstuck": ("a2a_ask",),
    "channel-discovery": ("mattermost_search_channels",),
}


def test_onboarding_renders_until_marked_and_again_when_the_chain_changes(seat, run, unit, company):
    Page.objects.create(container_key="ENG", title="Onboarding: how the platform team works")
    text = block(run(ask="hi"), "first_turn_onboarding")["text"]
    assert "- Onboarding: how the platform team works (ENG)" in text and "mark_onboarded" in text
    onboarding.mark_onboarded(seat=seat)
    assert block(run(ask="hi"), "first_turn_onboarding")["text"] == ""
    unit.parent = UnitFactory(company=company, key="org", knowledge_container="ORG")
    unit.save()
    seat.refresh_from_db()
    assert onboarding.onboarded_at(seat) is None
    assert block(run(ask="hi"), "first_turn_onboarding")["text"] != ""


def test_onboarding_lists_only_onboarding_pages_on_the_unit_chain(seat, run):
    Page.objects.create(container_key="ENG", title="Onboarding checklist")
    Page.objects.create(container_key="ENG", title="Deploy runbook")
    Page.objects.create(container_key="OTHER", title="Onboarding elsewhere")
    Page.objects.create(container_key="ENG", title="Welcome", labels=["onboarding"])
    text = block(run(ask="hi"), "first_turn_onboarding")["text"]
    assert "Onboarding checklist" in text and "Welcome" in text
    assert "Deploy runbook" not in text and "elsewhere" not in text


def test_the_six_bundled_tool_skills_parse_with_their_triggers():
    keys = {skill.key: skill for skill in tool_skills.bundled()}
    assert set(keys) == set(SPEC_SIX)
    for key, tools in SPEC_SIX.items():
        assert keys[key].applies(tools)
        assert not keys[key].applies(("some_unrelated_tool",))


@pytest.mark.parametrize("tools,expected", [
    ((), []),
    (("reflect_and_persist",), ["reflect-and-persist"]),
    (("mattermost_post_message",), ["channel-discovery", "getting-unstuck", "observed-directives"]),
])
def test_guidance_is_injected_only_for_registered_tools(seat, tools, expected):
    _text, keys = tool_skills.guidance(seat, tools)
    assert sorted(keys) == expected


def test_retrieval_rule_is_stated_once_with_one_line_per_requery_tool_the_role_has(seat):
    text, keys = tool_skills.guidance(seat, ("query_episodes", "refresh_memory"))
    assert keys == ["retrieval-research"]
    assert text.count("re-query with your own account of it") == 1
    assert "- query_episodes(query=...)" in text and "- refresh_memory(context_hint=...)" in text
    assert "page-search tools" not in text and "<!--" not in text
    text, _ = tool_skills.guidance(seat, ("confluence_search",))
    assert "page-search tools" in text and "query_episodes(query" not in text


def test_prefetch_uses_the_roles_tools_unless_the_turn_names_them(seat, role, run):
    role.tools = ["refine_skill"]
    role.save()
    assert run(ask="hi")["guidance_keys"] == ["refine-skill"]
    assert run(ask="hi", tools=("reflect_and_persist",))["guidance_keys"] == ["reflect-and-persist"]
    assert run(ask="hi", tools=())["guidance"] == ""


def test_a_withdrawn_builtin_gets_no_guidance_even_when_the_role_lists_it(seat, role, run, serve_config):
    role.tools = ["refine_skill", "reflect_and_persist"]
    role.save()
    assert sorted(run(ask="hi")["guidance_keys"]) == ["refine-skill", "reflect-and-persist"]
    off = replace(schema.Learning(), skill_refinement=replace(schema.SkillRefinement(), enabled=False))
    serve_config(learning=off)
    answer = run(ask="hi")
    assert answer["guidance_keys"] == ["reflect-and-persist"] and "refine_skill" not in answer["guidance"]


REGISTRY_PAGE = """---
key: refine-skill
tool: refine_skill
---
### Keeping your skills current
Refine a loaded skill only after the lead confirms the change."""


def registry(serve_config, **spec):
    return serve_config(knowledge=schema.Knowledge(
        backend="native", scope=["OPS"], tool_skills=schema.ToolSkillsRegistry(container="OPS", **spec)))


def test_a_registry_page_overrides_the_bundled_fragment_and_each_load_is_a_skill_used_event(seat, role, run,
                                                                                          serve_config):
    role.tools = ["refine_skill", "reflect_and_persist"]
    role.save()
    registry(serve_config)
    parent = save_page(container_key="OPS", title="Tool Skills", body="Guidance fragments, one page each.")
    page = save_page(container_key="OPS", title="Refine skill", body=REGISTRY_PAGE, parent=parent)
    answer = run(ask="hi", run_id="run-guided")
    assert "only after the lead confirms" in answer["guidance"] and "rather than waiting" not in answer["guidance"]
    assert "### Persisting what you learn (reflect_and_persist)" in answer["guidance"]  # no page: the default
    used = {e.payload["key"]: e for e in Event.objects.filter(name="skill_used", turn_id="run-guided")}
    assert set(used) == {"refine-skill", "reflect-and-persist"}
    assert used["refine-skill"].payload["source_kind"] == "registry"
    assert (used["refine-skill"].payload["source_page_id"], used["refine-skill"].payload["source_container"]) == (
        str(page.pk), "OPS")
    assert used["reflect-and-persist"].payload["source_page_id"] == ""  # the bundled default


def test_an_operator_edit_applies_at_the_next_turn_without_a_deploy(seat, role, run, serve_config):
    role.tools = ["refine_skill"]
    role.save()
    registry(serve_config)
    parent = save_page(container_key="OPS", title="Tool Skills")
    assert "rather than waiting" in run(ask="hi")["guidance"]  # the bundled default until a page says otherwise
    save_page(container_key="OPS", title="Refine skill", body=REGISTRY_PAGE, parent=parent)
    assert "only after the lead confirms" in run(ask="hi")["guidance"]
    save_page(container_key="OPS", title="Broken", body="no front matter", parent=parent)
    assert "only after the lead confirms" in run(ask="hi")["guidance"]  # a page that does not parse is skipped


def test_confluence_pages_under_the_configured_parent_are_the_registry(seat, role, run, serve_config,
                                                                     fake_confluence, monkeypatch):
    role.tools = ["refine_skill"]
    role.save()
    monkeypatch.setenv("CREWLET_TEST_TOOL_SKILLS_TOKEN", "org-secret")
    serve_config(knowledge=schema.Knowledge(
        backend="confluence", scope=["OPS"], tool_skills=schema.ToolSkillsRegistry(container="OPS"),
        confluence=schema.Confluence(url=fake_confluence.url, username="bot", token_env="CREWLET_TEST_TOOL_SKILLS_TOKEN")))
    parent = fake_confluence.add_page("OPS", "Tool Skills")
    storage = "".join(f"<p>{line}</p>" for line in REGISTRY_PAGE.splitlines())
    page = fake_confluence.add_page("OPS", "Refine skill", storage, parent_id=parent)
    answer = run(ask="hi", run_id="run-cf")
    assert "only after the lead confirms" in answer["guidance"]
    used = Event.objects.get(name="skill_used", turn_id="run-cf")
    assert (used.payload["source_page_id"], used.payload["source_container"]) == (page, "OPS")
    assert any(f"parent = {parent}" in cql for cql in fake_confluence.cqls)


def test_an_unreachable_registry_leaves_the_bundled_defaults_serving(seat, role, run, serve_config):
    role.tools = ["refine_skill"]
    role.save()
    serve_config(knowledge=schema.Knowledge(
        backend="confluence", scope=["OPS"], tool_skills=schema.ToolSkillsRegistry(container="OPS"),
        confluence=schema.Confluence(url=closed_port_url(), username="bot", token_env="PATH")))
    assert "rather than waiting" in run(ask="hi")["guidance"]
