"""A run's procedure: the tools it called to do its work, in order, without this service's own tools.

The memory and skill builtins (``query_episodes``, ``refresh_memory``, ``reflect_and_persist``,
``use_skill``, ``refine_skill``, ``mark_onboarded``: ``learning.tool_names.LEARNING_TOOLS``) are how
an agent learns, not how it does a kind of work: a runtime that recalls before it acts and saves a fact
after calls them in every turn. Counted as steps, they made every drafted skill begin "Call
`query_episodes`", let a turn of one real tool pass ``min_tool_calls``, and made unlike work alike by
tool-set Jaccard (the same three memory calls on both sides). ``search_knowledge`` stays a step: which
page a procedure reads is part of it.

What is stored stays what happened (an episode's ``tool_sequence`` is the final round as called); the
procedure is read where a skill is drafted, gated or compared. A name is the builtin's own or as an MCP
client prefixes it (``mcp__<server>__query_episodes``, Claude Code's form).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from learning.tool_names import LEARNING_TOOLS

MCP_PREFIX = "mcp__"


def own_tool(name: str) -> bool:
    """Whether ``name`` is one of this service's learning builtins, bare or MCP-prefixed."""
    return name in LEARNING_TOOLS or (name.startswith(MCP_PREFIX) and name.rsplit("__", 1)[-1] in LEARNING_TOOLS)


@functools.lru_cache(maxsize=4096)
def _work(names: frozenset[str]) -> frozenset[str]:
    """A set of tool names less the service's own (a seat's runs repeat a few tool sets: remembered)."""
    return frozenset(n for n in names if not own_tool(n))


def procedure(tools: Iterable[str] | None) -> list[str]:
    """The run's work tools in order, repeats kept (``own_tool`` ones left out)."""
    return [t for t in tools or () if not own_tool(t)]


def jaccard(a, b) -> float:
    """Tool-SET Jaccard of two runs' procedures: order-insensitive, so a permutation of one procedure is
    the same skill. Two empty sets are no evidence of sameness, so 0. (Called for every alike run a
    reflection reads, up to ``episode_fetch_limit``: kept to set operations.)"""
    sa, sb = _work(frozenset(a or ())), _work(frozenset(b or ()))
    union = sa | sb
    return len(sa & sb) / len(union) if union else 0.0
