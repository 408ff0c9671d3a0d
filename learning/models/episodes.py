from django.db import models

from core.vectors import EmbeddedMixin, VectorField


class Episode(EmbeddedMixin):
    """One completed turn (raw) or one cluster of turns (compacted)."""

    RAW = "raw"
    COMPACTED = "compacted"
    KINDS = [(RAW, "raw"), (COMPACTED, "compacted")]

    seat = models.ForeignKey("crewlet.Seat", on_delete=models.CASCADE, related_name="episodes")
    kind = models.CharField(max_length=10, choices=KINDS, default=RAW)
    run_id = models.CharField(max_length=200, blank=True)
    work_key = models.CharField(max_length=200, blank=True)
    work_item = models.CharField(max_length=200, blank=True)
    conversation_id = models.CharField(max_length=300, blank=True)
    conversation_kind = models.CharField(max_length=40, blank=True)
    task_summary = models.TextField(blank=True, help_text="The label of the event that woke the turn.")
    ask = models.TextField(blank=True)
    plan_summary = models.TextField(blank=True, help_text="What it did.")
    tool_sequence = models.JSONField(default=list, blank=True)
    skills_used = models.JSONField(default=list, blank=True)
    review_outcome = models.CharField(max_length=20, blank=True)
    started_at = models.DateTimeField(db_index=True)
    ended_at = models.DateTimeField()
    duration_ms = models.BigIntegerField(null=True, blank=True)
    # compacted rows
    count = models.PositiveIntegerField(default=1)
    common_task_pattern = models.TextField(blank=True)
    common_outcome = models.TextField(blank=True)
    success_rate = models.FloatField(null=True, blank=True)
    subjects_involved = models.JSONField(default=list, blank=True)
    notable_patterns = models.TextField(blank=True)
    exemplar_turn_ids = models.JSONField(default=list, blank=True)
    is_exemplar = models.BooleanField(default=False, help_text="Kept raw as a compacted row's drill-down anchor.")
    consolidated_into_skill = models.ForeignKey(
        "learning.SynthesizedSkill", null=True, blank=True, on_delete=models.SET_NULL, related_name="source_episodes"
    )
    consolidated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "episodes"
        indexes = [
            models.Index(fields=["seat", "kind", "started_at"]),
            models.Index(fields=["seat", "conversation_id", "ended_at"]),
            models.Index(fields=["seat", "work_key"]),
            # the synthesizer's prior runs: a seat's newest raw episodes first, read off the index, not sorted
            models.Index(fields=["seat", "kind", "ended_at"], name="episodes_seat_kind_ended_idx"),
            # a search's scope (the seat's raw turns of one model and width) counted from the index alone
            models.Index(fields=["seat", "kind", "embedding_model", "embedding_dim"], name="episodes_search_scope_idx"),
        ]
        constraints = [
            # a redelivered pass (a worker killed after the insert, before the turn was marked) replaces
            # its episode instead of adding a second one
            models.UniqueConstraint(
                fields=["seat", "run_id"], condition=models.Q(kind="raw") & ~models.Q(run_id=""),
                name="one_raw_episode_per_run",
            ),
        ]

    def __str__(self):
        return f"{self.kind} {self.task_summary[:60]}"


class EpisodePiece(models.Model):
    """One of the opening lines of a raw episode's own messages with its own vector (``episodes.search_pieces``): a
    turn is as near to a query as its nearest vector (a long conversation's opening is not diluted by
    the rest of it)."""

    # deleted with their episode by the database (a trigger, migration 0016): Django's collector would load
    # every deleted episode whole to find its pieces
    episode = models.ForeignKey(Episode, on_delete=models.DO_NOTHING, related_name="pieces")
    ordinal = models.PositiveIntegerField()
    embedding = VectorField()
    embedding_model = models.CharField(max_length=200)
    embedding_dim = models.PositiveIntegerField()

    class Meta:
        db_table = "episode_pieces"
        indexes = [models.Index(fields=["episode", "embedding_model"])]
