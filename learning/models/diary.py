from django.db import models

from core.vectors import EmbeddedMixin


class DiaryEntry(EmbeddedMixin):
    """``agent_diary``: the seat's private observation log, stored verbatim."""

    LONG = "diary_long"
    SHORT = "diary_short"
    KINDS = [(LONG, "long"), (SHORT, "short")]

    seat = models.ForeignKey("crewlet.Seat", on_delete=models.CASCADE, related_name="diary")
    kind = models.CharField(max_length=12, choices=KINDS)
    content = models.TextField()
    ttl_until = models.DateTimeField(null=True, blank=True)
    source = models.CharField(max_length=40, blank=True)  # persist_decider | reflect_and_persist | ...
    turn_id = models.CharField(max_length=200, blank=True)
    use_count = models.PositiveIntegerField(default=0)
    last_retrieved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(db_index=True)

    class Meta:
        db_table = "agent_diary"
        verbose_name_plural = "diary entries"
        indexes = [
            models.Index(fields=["seat", "created_at"]),
            models.Index(fields=["seat", "kind", "ttl_until"]),
        ]

    def __str__(self):
        return self.content[:80]
