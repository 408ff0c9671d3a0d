from django.db import models


class Event(models.Model):
    """Append-only event log, written only through ``core.events.publish``."""

    name = models.CharField(max_length=80)
    seat = models.ForeignKey("crewlet.Seat", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    turn_id = models.CharField(max_length=200, blank=True)
    trace_id = models.CharField(max_length=200, blank=True)
    payload = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        db_table = "learning_event"  # the table predates the move into core
        indexes = [
            models.Index(fields=["name", "created_at"], name="learning_ev_name_11fb59_idx"),
            models.Index(fields=["seat", "name", "created_at"], name="learning_ev_seat_id_3d5eef_idx"),
            models.Index(fields=["turn_id"], name="learning_ev_turn_id_2bdfb2_idx"),
        ]
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.name} {self.created_at:%Y-%m-%d %H:%M:%S}"
