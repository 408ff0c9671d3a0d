from django.db import models


class SynthesizedSkill(models.Model):
    """A procedure one seat learned; agent-scope only, body in SKILL.md shape."""

    ACTIVE = "active"
    STALE = "stale"
    ARCHIVED = "archived"
    STATES = [(ACTIVE, "active"), (STALE, "stale"), (ARCHIVED, "archived")]

    seat = models.ForeignKey("crewlet.Seat", on_delete=models.CASCADE, related_name="skills")
    name = models.CharField(max_length=120)
    description = models.TextField()
    body = models.TextField()
    version = models.PositiveIntegerField(default=1)
    state = models.CharField(max_length=10, choices=STATES, default=ACTIVE)
    pinned = models.BooleanField(default=False)
    use_count = models.PositiveIntegerField(default=0)
    last_used_at = models.DateTimeField(null=True, blank=True)
    tool_sequence = models.JSONField(default=list, blank=True)
    trigger = models.CharField(max_length=20, blank=True)  # inline | clustered | agent
    origin_turn_id = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "synthesized_skills"
        unique_together = [("seat", "name")]
        indexes = [models.Index(fields=["seat", "state"])]

    def __str__(self):
        return self.name


class SkillVersion(models.Model):
    """``synthesized_skill_versions``: a prior state, archived by every change."""

    skill = models.ForeignKey(SynthesizedSkill, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()
    description = models.TextField()
    body = models.TextField()
    reason = models.CharField(max_length=300, blank=True)
    actor = models.CharField(max_length=150, blank=True)
    archived_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "synthesized_skill_versions"
        ordering = ["-version"]

    def __str__(self):
        return f"{self.skill.name} v{self.version}"
