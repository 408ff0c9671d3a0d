"""The gate-path hints: what a relevance block says instead of going silently empty.

Each is its own sentence because each sends the seat somewhere different; ``UnsearchedKnowledgeHint``
in particular makes no claim about what the company has written down.
"""

EmptyMemoryHint = (
    "No note from your personal memory was matched to this turn at turn start: the match is made against "
    "the triggering message alone, before any recon. You do have notes; once you know what the task is "
    "really about, call refresh_memory with your own account of it."
)

EmptyKnowledgeHint = (
    "No knowledge-base page was surfaced for this turn at turn start. Once the task's real shape is known, "
    "search again with search_knowledge using what you have learned."
)

UnsearchedKnowledgeHint = (
    "The knowledge base could not be searched at turn start (no copy of it answered), so nothing is known "
    "either way about which pages exist. Search with search_knowledge before concluding a page is missing, "
    "and do not write a duplicate of one that may already exist."
)

EmptyRecallHint = (
    "If this task resembles something you have done before, call query_episodes once you know what it is "
    "about: similar past turns were not looked up at turn start because the trigger is only a pointer."
)


def close_call(found: str, matched: str) -> str:
    """What a recall that was a close call says (``episode_search.close_call``): ``found`` are the turns shown,
    ``matched`` what they were ranked against. Either the ask is generic (many kinds of work open alike) or the
    same work recurs (the turns are alike too): the sentence holds for both. bench/recall.py prints how often the
    first of such a ranking was the same work: on the dev data 0.19-0.55 of the time, against 0.84-0.88 for the
    rest."""
    return (f"{found} matched {matched} about equally well: nothing in it sets one apart. Unless they are all the "
            "same work, do not take the first for yours; once you know the specifics (an id, a name, a place, a "
            "date), call query_episodes with them.")
