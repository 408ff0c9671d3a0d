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
        indexes = [
            models.Index(fields=["name", "created_at"], name="event_name_created_idx"),
            models.Index(fields=["seat", "name", "created_at"], name="event_seat_name_created_idx"),
            models.Index(fields=["turn_id"], name="event_turn_idx"),
        ]
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.name} {self.created_at:%Y-%m-%d %H:%M:%S}"


class SpendDay(models.Model):
    """Auxiliary spend of one day, rolled up from ``auxiliary_spend`` events before they are swept.

    One row per day, seat and (stage, purpose, provider, model, outcome); the event retention sweep
    adds to it what it deletes, so the totals a reader sums (these rows plus the events still kept)
    never change when events are swept. The budget counters are separate and never swept.
    """

    day = models.DateField()
    seat = models.ForeignKey("crewlet.Seat", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    stage = models.CharField(max_length=40, blank=True)
    purpose = models.CharField(max_length=80, blank=True)
    provider = models.CharField(max_length=80, blank=True)
    model = models.CharField(max_length=200, blank=True)
    outcome = models.CharField(max_length=40, blank=True)
    calls = models.PositiveIntegerField(default=0)
    input_tokens = models.BigIntegerField(default=0)
    output_tokens = models.BigIntegerField(default=0)

    class Meta:
        indexes = [models.Index(fields=["day", "purpose"], name="spend_day_day_purpose_idx")]

    def __str__(self):
        return f"{self.day} {self.purpose}: {self.calls} calls"


class BudgetCounter(models.Model):
    """Tokens spent by one seat or the company in one window, written only through ``core.budgets``."""

    scope = models.CharField(max_length=10)  # "seat" | "company"
    scope_id = models.BigIntegerField()
    window_start = models.DateTimeField()
    tokens = models.BigIntegerField(default=0)

    class Meta:
        unique_together = [("scope", "scope_id", "window_start")]
