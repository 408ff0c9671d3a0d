"""``search_knowledge``: search the team knowledge base with a query you write yourself, mid-turn.

Over the same Searcher seam as the turn-start block, authenticating as the same seat; a backend
that is unreachable, unconfigured or scoped to nothing answers ``ok: false`` with a sentence saying
which. The read is one ``knowledge_read`` under the turn's run id.
"""

from __future__ import annotations

from pydantic import Field

from crewlet.errors import BadInput
from knowledge.searcher import search_knowledge_answer
from learning.tools.base import Arguments, Text, Tool, ToolCall, ToolResult


class SearchKnowledgeArgs(Arguments):
    query: Text = Field(..., min_length=1, max_length=500, description="A few keywords a relevant page would contain.")


def handle(call: ToolCall[SearchKnowledgeArgs]) -> ToolResult:
    query = " ".join(call.args.query.split())
    if not query:
        raise BadInput("arguments.query: the query has no words in it", field="arguments.query")
    answer = search_knowledge_answer(call.seat, query, turn_id=call.run_id)
    return ToolResult(ok=answer.ok, text=answer.text, data={"query": query})


TOOL = Tool(
    name="search_knowledge",
    description="Search your team's knowledge base once you know what the task is really about, especially when "
    "the Relevant knowledge block was empty or says it could not search.",
    arguments=SearchKnowledgeArgs,
    handler=handle,
)
