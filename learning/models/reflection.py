from django.db import models


class SeatReflectionLock(models.Model):
    """The per-seat reflection lease: one pass for a seat at a time, on engines without advisory locks."""

    seat = models.OneToOneField(
        "crewlet.Seat", primary_key=True, on_delete=models.CASCADE, related_name="reflection_lock"
    )
    holder = models.CharField(max_length=200, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "seat_reflection_locks"

    def __str__(self):
        return f"{self.seat_id}: {self.holder or 'free'}"
