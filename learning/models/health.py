from django.db import models


class LearningHealth(models.Model):
    """One row of the ``learning_health`` SQL view: a seat's skill-library rollup (read-only).

    Seats with no skill rows have no row here: their averages are unknown, not zero.
    """

    seat = models.OneToOneField(
        "crewlet.Seat", primary_key=True, on_delete=models.DO_NOTHING, db_column="seat_id", related_name="+"
    )
    total_skills = models.BigIntegerField()
    skills_used_at_least_once = models.BigIntegerField()
    total_skill_uses = models.BigIntegerField()
    most_recent_skill_use = models.DateTimeField(null=True)
    avg_uses_per_skill = models.FloatField(null=True)
    avg_skill_age_days = models.FloatField(null=True)

    class Meta:
        managed = False
        db_table = "learning_health"
        verbose_name = "learning health (per seat)"
        verbose_name_plural = "learning health (per seat)"

    def __str__(self):
        return f"learning health of seat {self.seat_id}"
