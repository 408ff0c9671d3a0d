"""Transcript tables: sources and their watermarks, sessions, episodes, shards, drafts, recommendations.

Everything here is stored after scrubbing; no raw transcript line is ever kept. Transcripts belong
to the seat whose work they record: every row carries it, and the seat's auxiliary chain and
budget pay for the model calls made about them.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from core.vectors import EmbeddedMixin


class TranscriptSource(models.Model):
    """One transcript file and the adapter's own watermark for it (opaque to everything else)."""

    seat = models.ForeignKey("crewlet.Seat", on_delete=models.CASCADE, related_name="transcript_sources")
    adapter = models.CharField(max_length=40)
    path = models.CharField(max_length=1000, help_text="The file, with the home directory written as ~.")
    watermark = models.TextField(blank=True, default="")
    read_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        unique_together = [("adapter", "path")]

    def __str__(self):
        return self.path


class TranscriptSession(models.Model):
    """One harness session (the distinct source the ladder counts), with what later runs observed in it."""

    seat = models.ForeignKey("crewlet.Seat", on_delete=models.CASCADE, related_name="transcript_sessions")
    source = models.ForeignKey(TranscriptSource, on_delete=models.CASCADE, related_name="sessions")
    session_id = models.CharField(max_length=200)
    cwd = models.CharField(max_length=1000, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    human_messages = models.PositiveIntegerField(default=0)
    pseudo_user = models.JSONField(default=dict, blank=True, help_text="Harness-injected user records, by kind.")
    observations = models.JSONField(default=dict, blank=True, help_text="Hooks fired, skills loaded, agents and tools used.")
    ingested_at = models.DateTimeField(auto_now=True)

    class Meta:
        unique_together = [("source", "session_id")]
        indexes = [models.Index(fields=["seat", "started_at"])]

    def __str__(self):
        return self.session_id


class TranscriptEpisode(models.Model):
    """Something tried, gone wrong, and corrected: the unit lessons are extracted from."""

    CORRECTED = "corrected"  # a person said it was wrong
    SELF_CORRECTED = "self_corrected"  # a call failed and a later one of the same tool worked
    KINDS = [(CORRECTED, "corrected by a person"), (SELF_CORRECTED, "self-corrected")]

    seat = models.ForeignKey("crewlet.Seat", on_delete=models.CASCADE, related_name="transcript_episodes")
    session = models.ForeignKey(TranscriptSession, on_delete=models.CASCADE, related_name="episodes")
    key = models.CharField(max_length=300)
    kind = models.CharField(max_length=20, choices=KINDS)
    ask = models.TextField(blank=True)
    attempt = models.TextField(blank=True)
    failure = models.TextField(blank=True)
    correction = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    extracted_at = models.DateTimeField(null=True, blank=True, help_text="When shards were extracted; empty: not yet.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        unique_together = [("session", "key")]

    def __str__(self):
        return f"{self.kind}: {self.ask[:60]}"


class Shard(EmbeddedMixin):
    """A candidate lesson stated as a declarative fact, with its source session and vector."""

    PENDING = "pending"  # no verdict yet: waits for recurrence or corroboration
    REVIEW = "review"  # recurred, but from too few distinct sources: a person decides
    ACCEPTED = "accepted"  # climbed the ladder; awaiting the judge
    PUBLISHED = "published"  # the judge kept it: vetted, in the corroboration pool
    NOT_KEPT = "not_kept"  # the judge answered kept: false
    REJECTED = "rejected"  # a veto, or reject_memory
    ABSORBED = "absorbed"  # a repeat folded into the shard it recurred with
    STATUSES = [(s, s.replace("_", " ")) for s in (PENDING, REVIEW, ACCEPTED, PUBLISHED, NOT_KEPT, REJECTED, ABSORBED)]
    OPEN = (PENDING, REVIEW, ACCEPTED, NOT_KEPT)

    BY_LADDER = "ladder"
    BY_SEAT = "seat"
    BY_PERSON = "person"

    seat = models.ForeignKey("crewlet.Seat", on_delete=models.CASCADE, related_name="shards")
    episode = models.ForeignKey(TranscriptEpisode, null=True, blank=True, on_delete=models.SET_NULL, related_name="shards")
    session_id = models.CharField(max_length=200, help_text="The source the distinct-source rule counts.")
    text = models.TextField()
    text_hash = models.CharField(max_length=64, db_index=True)
    status = models.CharField(max_length=10, choices=STATUSES, default=PENDING, db_index=True)
    reason = models.CharField(max_length=300, blank=True, help_text="Why the ladder or the judge decided.")
    evidence = models.JSONField(default=dict, blank=True)
    absorbed_into = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="repeats")
    rejected_by = models.CharField(max_length=10, blank=True)
    judge_verdict = models.JSONField(null=True, blank=True)
    tier = models.CharField(max_length=12, blank=True)
    scope = models.CharField(max_length=200, blank=True)
    scope_key = models.CharField(max_length=200, blank=True)
    classified_at = models.DateTimeField(null=True, blank=True)
    published_at = models.DateTimeField(null=True, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        indexes = [models.Index(fields=["status", "embedding_model"])]

    def __str__(self):
        return self.text[:80]


class Draft(models.Model):
    """A drafted artifact body, keyed on a hash of the lesson text: re-running the loop reuses it."""

    key = models.CharField(max_length=64, unique=True)
    tier = models.CharField(max_length=12)
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    body = models.TextField(blank=True)
    provider = models.CharField(max_length=100, blank=True)
    model = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"{self.tier}:{self.name}"


class Recommendation(models.Model):
    """One artifact a published lesson should become: the rendered file and its diff, for a person."""

    CREATE = "create"  # a new private file: may be installed additively
    EDIT = "edit"  # a shared file: approval writes nothing
    MODES = [(CREATE, "creates a new file"), (EDIT, "edits a shared file")]

    PROPOSED = "proposed"
    APPROVED = "approved"
    REJECTED = "rejected"
    INSTALLED = "installed"
    STATUSES = [(s, s) for s in (PROPOSED, APPROVED, REJECTED, INSTALLED)]

    seat = models.ForeignKey("crewlet.Seat", on_delete=models.CASCADE, related_name="recommendations")
    repo_root = models.CharField(max_length=1000, blank=True)
    tier = models.CharField(max_length=12)
    mode = models.CharField(max_length=6, choices=MODES)
    scope = models.CharField(max_length=200)
    scope_key = models.CharField(max_length=200)
    target_path = models.CharField(max_length=500, help_text="Relative to the repository.")
    resolves = models.CharField(max_length=500, blank=True, help_text="The existing artifact this resolves against.")
    lessons = models.ManyToManyField(Shard, related_name="recommendations")
    draft = models.ForeignKey(Draft, null=True, on_delete=models.SET_NULL, related_name="recommendations")
    existing = models.TextField(blank=True, help_text="The target's contents when drafted (empty: no such file).")
    contents = models.TextField(help_text="The rendered file.")
    diff = models.TextField(blank=True)
    notes = models.TextField(blank=True)
    status = models.CharField(max_length=10, choices=STATUSES, default=PROPOSED)
    reviewed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    reviewed_at = models.DateTimeField(null=True, blank=True)
    installed_at = models.DateTimeField(null=True, blank=True)
    landed_at = models.DateTimeField(null=True, blank=True, help_text="Installed, or found in the repository's inventory.")
    uses = models.PositiveIntegerField(null=True, blank=True, help_text="Observed uses; empty where the tier's use cannot be observed.")
    later_sessions = models.PositiveIntegerField(null=True, blank=True)
    retirement_proposed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        unique_together = [("repo_root", "tier", "scope_key")]

    def __str__(self):
        return f"{self.tier} {self.target_path}"

    @property
    def uses_display(self) -> str:
        return "unknown" if self.uses is None else str(self.uses)
