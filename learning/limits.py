"""Every content limit the spec names, defined once, each with the one function that checks it."""

from crewlet.errors import BadInput

MAX_CONTENT_CHARS = 2000  # learning.MaxContentChars: a diary note
MAX_LONG_NOTES_PER_SEAT = 500  # diary_long cap per seat, evicted by use
EPISODE_ACCOUNT_BYTES = 600  # learning.EpisodeAccountBytes: ask / account shown whole up to this
EPISODE_REWRITE_TIMEOUT = 30.0  # learning.EpisodeRewriteTimeout: one deadline for all of one render's rewrites
MAX_CONCURRENT_REWRITES = 4
COMPACTION_CONDENSE_BYTES = 280  # a member's task or outcome past this is condensed first


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
