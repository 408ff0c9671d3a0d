"""First-turn onboarding until mark_onboarded (chain-hash invalidation) and tool-skill guidance."""

import pytest

from knowledge.models import Page
from learning.prefetch import onboarding, tool_skills
from tests.factories import UnitFactory

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
def test_guidance_is_injected_only_for_registered_tools(tools, expected):
    _text, keys = tool_skills.guidance(tools)
    assert sorted(keys) == expected


def test_retrieval_rule_is_stated_once_with_one_line_per_requery_tool_the_role_has():
    text, keys = tool_skills.guidance(("query_episodes", "refresh_memory"))
    assert keys == ["retrieval-research"]
    assert text.count("re-query with your own account of it") == 1
    assert "- query_episodes(query=...)" in text and "- refresh_memory(context_hint=...)" in text
    assert "page-search tools" not in text and "<!--" not in text
    text, _ = tool_skills.guidance(("confluence_search",))
    assert "page-search tools" in text and "query_episodes(query" not in text


def test_prefetch_uses_the_roles_tools_unless_the_turn_names_them(seat, role, run):
    role.tools = ["refine_skill"]
    role.save()
    assert run(ask="hi")["guidance_keys"] == ["refine-skill"]
    assert run(ask="hi", tools=("reflect_and_persist",))["guidance_keys"] == ["reflect-and-persist"]
    assert run(ask="hi", tools=())["guidance"] == ""
