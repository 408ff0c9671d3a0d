from django.db import models


class PromotionDraft(models.Model):
    """What the promotion pass drafted for one converged cluster of a unit, and which skills it saw.

    ``title`` is the cluster's dedup key, fixed when the cluster is first drafted: a later tick
    finds its cluster again by the skills they share (``skill_ids``), so the key survives the
    cluster's oldest skill being archived. When the page is gone (a lead rejected or deleted it)
    the cluster is drafted again only with a skill this record never saw.
    """

    unit = models.ForeignKey("crewlet.Unit", on_delete=models.CASCADE, related_name="+")
    title = models.CharField(max_length=400)
    page_id = models.CharField(max_length=200, blank=True)
    skill_ids = models.JSONField(default=list, help_text="Every skill the pass saw in the cluster while a draft of it existed.")
    drafts = models.PositiveIntegerField(default=0, help_text="How many times the cluster was drafted.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["unit", "title"], name="promotion_draft_title_per_unit")]

    def __str__(self):
        return f"{self.unit_id}: {self.title}"
