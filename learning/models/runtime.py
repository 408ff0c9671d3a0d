from django.db import models


class Duty(models.Model):
    """A background pass's claim: one holder at a time, under a lease."""

    name = models.CharField(max_length=80, primary_key=True)
    holder = models.CharField(max_length=200, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    last_started_at = models.DateTimeField(null=True, blank=True)
    last_finished_at = models.DateTimeField(null=True, blank=True)
    last_result = models.JSONField(default=dict, blank=True)

    class Meta:
        verbose_name_plural = "duties"

    def __str__(self):
        return self.name


class PrefetchSnapshot(models.Model):
    """The turn-start blocks for one run id, frozen so a repeat gets the same prefix back."""

    run_id = models.CharField(max_length=200)
    seat = models.ForeignKey("crewlet.Seat", on_delete=models.CASCADE, related_name="+")
    rendered = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["seat", "run_id"], name="snapshot_run_id_per_seat")]


class RefreshLedger(models.Model):
    """``refresh_memory`` state for one run id: slots spent and answered hints."""

    run_id = models.CharField(max_length=200)
    seat = models.ForeignKey("crewlet.Seat", on_delete=models.CASCADE, related_name="+")
    spent = models.PositiveIntegerField(default=0)
    hints = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True, db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["seat", "run_id"], name="ledger_run_id_per_seat")]


class FillMinute(models.Model):
    """What the embedding fill sent in one wall-clock minute, whoever sent it (the scheduled tick,
    ``run_pass embed_fill``, ``backfill_embeddings``): the company's one budget for that minute."""

    minute = models.DateTimeField(unique=True)  # the minute's start
    requests = models.PositiveIntegerField(default=0)
    bytes = models.BigIntegerField(default=0)

    def __str__(self):
        return f"{self.minute:%Y-%m-%d %H:%M}: {self.requests} requests, {self.bytes} bytes"
