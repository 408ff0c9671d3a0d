from django.db import models


class CounterpartyProfile(models.Model):
    """What one observer seat has learned about one counterparty on one platform."""

    observer = models.ForeignKey("crewlet.Seat", on_delete=models.CASCADE, related_name="profiles")
    subject_handle = models.CharField(max_length=200, blank=True)
    subject_external_id = models.CharField(max_length=200, blank=True)
    subject_platform = models.CharField(max_length=60, blank=True)
    display_name = models.CharField(max_length=200, blank=True)
    communication_style = models.TextField(blank=True)
    past_decisions = models.JSONField(default=list, blank=True)
    sensitivities = models.JSONField(default=list, blank=True)
    topics = models.JSONField(default=list, blank=True)
    observations = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "counterparty_profiles"
        unique_together = [("observer", "subject_handle", "subject_external_id", "subject_platform")]

    def __str__(self):
        return self.subject_handle or self.subject_external_id


class OnboardingMarker(models.Model):
    seat = models.OneToOneField("crewlet.Seat", primary_key=True, on_delete=models.CASCADE, related_name="onboarding")
    chain_hash = models.CharField(max_length=64)
    onboarded_at = models.DateTimeField()

    class Meta:
        db_table = "agent_onboarding_markers"
