"""Every content limit the spec names, defined once, each with the one function that checks it."""

from crewlet.errors import BadInput

MAX_CONTENT_CHARS = 2000  # learning.MaxContentChars: a diary note
MAX_LONG_NOTES_PER_SEAT = 500  # diary_long cap per seat, evicted by use
EPISODE_ACCOUNT_BYTES = 600  # learning.EpisodeAccountBytes: ask / account shown whole up to this
EPISODE_REWRITE_TIMEOUT = 30.0  # learning.EpisodeRewriteTimeout: one deadline for all of one render's rewrites
MAX_CONCURRENT_REWRITES = 4
COMPACTION_CONDENSE_BYTES = 280  # a member's task or outcome past this is condensed first

# Caps on what the API takes (ours: the spec gives none). Each bounds the work one request can cause
# (an ask is embedded whole, split into model-sized pieces), so the largest is a few pieces' worth.
MAX_TEXT_CHARS = 16_000  # an ask, a message body, a plan summary, a failure reason
MAX_LABEL_CHARS = 2_000  # a waking event's label
MAX_INTERACTIONS = 200  # inbound messages on one turn
MAX_THREAD_MESSAGES = 500  # messages of a chat thread read at turn start
MAX_TOOL_CALLS = 1_000  # tool names in a turn's sequence or call list
MAX_SKILLS_OFFERED = 200  # skill ids one prompt offered
MAX_ROW_ID = 2**63 - 1  # a database id (bigint): a larger one is refused, not sent to the database
MAX_SKILL_BODY_CHARS = 100_000  # the ceiling of skill_refinement.max_body_chars (which stays the rule)
MAX_DURATION_MS = 366 * 24 * 3600 * 1000  # a turn's duration: a year and a day, far inside a bigint and a timedelta
# The times a record may carry, in UTC: every horizon the passes add to a stored time (retention, TTLs,
# staleness) stays inside what Python and the database can represent.
EARLIEST_TIME = "1970-01-01T00:00:00Z"
LATEST_TIME = "2999-12-31T23:59:59Z"


class LimitExceeded(BadInput):
    def __init__(self, message: str, *, limit_name: str, limit: int, size: int):
        super().__init__(message, limit=limit_name, max=limit, size=size)
        self.limit_name, self.limit, self.size = limit_name, limit, size


def check_note(content: str) -> None:
    """Refuse a note past ``learning.MaxContentChars`` (2,000 characters); never trim it."""
    if len(content) > MAX_CONTENT_CHARS:
        raise LimitExceeded(
            f"note is {len(content)} characters; the limit is {MAX_CONTENT_CHARS} characters "
            f"(learning.MaxContentChars). Tighten the text and retry.",
            limit_name="learning.MaxContentChars",
            limit=MAX_CONTENT_CHARS,
            size=len(content),
        )


def check_skill_body(body: str, max_body_chars: int) -> None:
    """Refuse a skill body past ``max_body_chars``; a clip would land mid-step."""
    if len(body) > max_body_chars:
        raise LimitExceeded(
            f"skill body is {len(body)} characters; max_body_chars is {max_body_chars}",
            limit_name="max_body_chars",
            limit=max_body_chars,
            size=len(body),
        )
