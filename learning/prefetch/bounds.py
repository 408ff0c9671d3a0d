"""The turn-start prefetch's bounds, named as the spec names them and defined once.

Where the spec gives no number (the skill catalogue's character budget, how many notes or pages
a block shows, how many ledger turns) the value is ours and says so.
"""

SIMILAR_WORK_HITS = 3  # ## Similar prior work: top 3 episode-search hits
EPISODE_SUMMARY_TEXT_BYTES = 11_000  # a sixth of one auxiliary call's input, "about 11 KB"
MEMORY_FILTER_MAX_SELECTED = 20  # ours: the most notes one filter call may select (cached whole)
MEMORY_BLOCK_NOTES = 8  # ours: notes the ## Personal memory block shows
SKILL_CATALOGUE_CHARS = 2_000  # ours: the ## Synthesized skills block's character budget
KNOWLEDGE_PAGES = 5  # ours: pages the ## Relevant knowledge block shows
THREAD_BYTES = 8_000  # ## The thread so far: bounded by whole messages
LEDGER_TURNS = 3  # ours: this seat's latest turns in the conversation the ledger shows
FROZEN_RUNS_KEPT = 256  # per-run state (frozen prefix, refresh ledger) for each seat's most recent 256 turns
SNAPSHOT_PRUNE_EVERY = 32  # ours: prune the frozen prefixes past FROZEN_RUNS_KEPT once per 32 new ones
