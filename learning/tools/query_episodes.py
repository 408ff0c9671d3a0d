"""``query_episodes``: search your own past turns — by meaning, by conversation, or by recency.

Similarity reads raw turns only and says how many turns it could not reach yet; conversation and
recency read both kinds (a compacted row is answered as its pattern). A query that cannot run says
what stopped it, because each cause sends the seat somewhere different.
"""

from __future__ import annotations

import logging
from typing import Literal

from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError
from pydantic import Field

from core.providers.embeddings import embed_one_beside, get_embedder
from core.providers.embeddings.base import PREFETCH_EMBED_BUDGET
from learning.memory import episode_search, episodes
from learning.prefetch import hints, past_turns
from learning.tools.base import Arguments, Text, Tool, ToolCall, ToolResult

log = logging.getLogger("learning.tools")

DEFAULT_LIMIT = 5
MAX_LIMIT = 20
STILL_WORKS = "Reading by conversation (conversation=...) and by recency (no query) still works."
UNLIKE = ("None of your past turns is like this query: this looks like new work. Your nearest turns follow, "
          "nearest first, for what they are -- other work:")

CAUSES = {
    "unconfigured": "This company has no embeddings configured, so your turns cannot be searched by meaning; "
    "stop asking with a query.",
    "configuration": "The embeddings provider refuses its configuration ({error}); no query will be searched by "
    "meaning until an operator fixes providers.embeddings, so stop asking with a query until then.",
    "refused": "The embeddings provider refused this query ({error}); only a differently worded query may get "
    "past it.",
    "transient": "The embeddings provider could not answer just now ({error}); the same query may work if you "
    "ask again.",
    "store": "Your episode store could not be read ({error}).",
}


class QueryEpisodesArgs(Arguments):
    query: Text | None = Field(None, max_length=8000, description="What to find turns similar to.")
    conversation: Text | None = Field(None, max_length=300, description="A conversation id: your turns in it.")
    outcome_filter: Literal["done", "failed", "self_iterate", "skipped"] | None = Field(
        None, description="Only turns that ended this way."
    )
    limit: int = Field(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT, description="How many turns to return.")


def failure(cause: str, error: str = "") -> ToolResult:
    text = f"{CAUSES[cause].format(error=error or 'no detail')} {STILL_WORKS}"
    return ToolResult(ok=False, text=text, data={"mode": "similarity", "cause": cause, "hits": []})


def _embed_cause(status: str, error: str) -> str:
    if status == "timeout":
        return "transient"
    if status == "unusable":
        return "refused"  # the query's vector has no direction: only another query may get past
    kind = error.split(":", 1)[0]
    return {"configuration": "configuration", "refused": "refused"}.get(kind, "transient")


def _hits(call: ToolCall[QueryEpisodesArgs], rows) -> list[dict]:
    rendered = past_turns.render(seat=call.seat, episodes=rows, turn_id=call.run_id)
    return [{"turn_id": t.turn_id, "kind": t.kind, "text": t.text, "exemplar_turn_ids": list(t.exemplar_turn_ids)}
            for t in rendered]


def _by_words(call: ToolCall[QueryEpisodesArgs], query: str, model: str, dim: int) -> list[tuple[int, float]] | None:
    """The turns ranked by the query's words, made while it embeds; None when the store failed (the search
    then ranks them itself, and reports the failure)."""
    try:
        return episode_search.by_words(seat=call.seat, model=model, dim=dim, query=query,
                                       outcome=call.args.outcome_filter)
    except DatabaseError:
        return None


def similarity(call: ToolCall[QueryEpisodesArgs], query: str) -> ToolResult:
    args = call.args
    try:
        embedder = get_embedder()
    except ImproperlyConfigured as exc:
        return failure("configuration", str(exc))
    if embedder is None:
        return failure("unconfigured")
    embedded, ranked_words = embed_one_beside(query, lambda model, dim: _by_words(call, query, model, dim),
                                              budget=PREFETCH_EMBED_BUDGET, embedder=embedder)
    if embedded.vector is None:
        return failure(_embed_cause(embedded.status, embedded.error), embedded.error)
    try:
        rows, close_call, unlike = episodes.recall(seat=call.seat, vector=embedded.vector, model=embedded.model,
                                                   query=query, limit=args.limit, outcome=args.outcome_filter,
                                                   ranked_words=ranked_words)
        unreachable = episodes.unreachable_count(seat=call.seat, model=embedded.model, dim=len(embedded.vector))
    except DatabaseError as exc:
        log.warning("episode store unreadable for %s", call.seat.handle, exc_info=True)
        return failure("store", f"{type(exc).__name__}: {exc}")
    hits = _hits(call, rows)
    lines = [h["text"] for h in hits]
    gap = (f"{unreachable} of your turns could not be reached by this search yet (no vector of the current "
           "model; they are being filled) — read them by conversation or by recency.") if unreachable else ""
    if hits and unlike:  # the nearest are shown for what they are: not work like this
        text = "\n".join([UNLIKE, *lines] + ([gap] if gap else []))
    elif hits:
        close = [hints.close_call("These turns", "the query")] if close_call else []
        text = "\n".join(["Your turns most similar to the query, most similar first:", *lines, *close] + ([gap] if gap else []))
    elif unreachable:
        text = f"No reachable turn resembles this. {gap}"
    else:
        text = "None of your past turns resembles this: this is new work."
    return ToolResult(ok=True, text=text, data={"mode": "similarity", "hits": hits, "unreachable": unreachable,
                                                 "close_call": close_call and not unlike, "unlike": unlike})


def listing(call: ToolCall[QueryEpisodesArgs]) -> ToolResult:
    args = call.args
    try:
        if args.conversation:
            rows = episodes.in_conversation(seat=call.seat, conversation_id=args.conversation, limit=args.limit,
                                            outcome=args.outcome_filter)
        else:
            rows = episodes.recent(seat=call.seat, limit=args.limit, outcome=args.outcome_filter)
    except DatabaseError as exc:
        return ToolResult(ok=False, text=f"Your episode store could not be read ({type(exc).__name__}: {exc}).",
                          data={"mode": "conversation" if args.conversation else "recency", "cause": "store"})
    mode = "conversation" if args.conversation else "recency"
    hits = _hits(call, rows)
    if mode == "conversation":
        head = f"Your turns in conversation {args.conversation}, newest first:"
        empty = f"You have no recorded turns in conversation {args.conversation}."
    else:
        head, empty = "Your most recent turns, newest first:", "You have no recorded turns yet."
    text = "\n".join([head, *(h["text"] for h in hits)]) if hits else empty
    return ToolResult(ok=True, text=text, data={"mode": mode, "hits": hits})


def handle(call: ToolCall[QueryEpisodesArgs]) -> ToolResult:
    query = (call.args.query or "").strip()
    return similarity(call, query) if query else listing(call)


TOOL = Tool(
    name="query_episodes",
    description="Search your own past turns: by meaning (query), in one conversation (conversation), or the most "
    "recent; use it after recon to find work like this that you have done before.",
    arguments=QueryEpisodesArgs,
    handler=handle,
)
