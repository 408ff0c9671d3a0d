from django.db import models


class Turn(models.Model):
    """A stored ``turn_completed`` record, whole; (seat, run id) is the durable redelivery key."""

    run_id = models.CharField(max_length=200)
    work_key = models.CharField(max_length=200, blank=True, db_index=True)
    seat = models.ForeignKey("crewlet.Seat", on_delete=models.CASCADE, related_name="turns")
    conversation_id = models.CharField(max_length=300, blank=True)
    conversation_kind = models.CharField(max_length=40, blank=True)
    review_outcome = models.CharField(max_length=20)
    payload = models.JSONField()
    received_at = models.DateTimeField(auto_now_add=True)
    reflected_at = models.DateTimeField(null=True, blank=True)
    redriven_at = models.DateTimeField(null=True, blank=True, help_text="When the backlog sweep last re-enqueued it.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["seat", "run_id"], name="turn_run_id_per_seat")]
        indexes = [
            models.Index(fields=["seat", "conversation_id", "received_at"]),
            models.Index(fields=["reflected_at"]),
        ]

    def __str__(self):
        return self.run_id


class ConversationState(models.Model):
    """Per (seat, conversation): the skill-reflection signal and its cooldown clock."""

    seat = models.ForeignKey("crewlet.Seat", on_delete=models.CASCADE, related_name="conversations")
    conversation_id = models.CharField(max_length=300)
    reflection_signal = models.BooleanField(default=False)
    signal_reason = models.CharField(max_length=100, blank=True)
    last_skill_reflection_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        unique_together = [("seat", "conversation_id")]
