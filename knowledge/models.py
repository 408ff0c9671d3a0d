"""Native knowledge-base pages (the native Searcher/PromotionWriter backend's store).

Rows are written through ``knowledge.pages.save_page`` (which embeds them), never ``Page.save``
directly, so a page's vector always matches its title and body.
"""

from django.db import models

from core.vectors import EmbeddedMixin

AUTO_DRAFTED_PARENT = "Auto-Drafted Skills"
AUTO_DRAFT_PREFIX = "[Auto-draft]"


class Page(EmbeddedMixin):
    DRAFT = "draft"
    PUBLISHED = "published"
    STATES = [(DRAFT, "draft"), (PUBLISHED, "published")]

    container_key = models.CharField(max_length=100, db_index=True)
    title = models.CharField(max_length=400)
    body = models.TextField(blank=True)
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="children")
    state = models.CharField(max_length=10, choices=STATES, default=PUBLISHED)
    author = models.CharField(max_length=150, blank=True)
    labels = models.JSONField(default=list, blank=True)
    source = models.JSONField(default=dict, blank=True, help_text="For auto-drafts: the skills and seats it came from.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        unique_together = [("container_key", "title")]
        permissions = [("publish_page", "Can publish an auto-drafted page (move it out of the drafts parent)")]

    def __str__(self):
        return f"{self.container_key}: {self.title}"


class DraftPage(Page):
    """The leads' review queue: the same rows, listed as the auto-drafts awaiting a decision."""

    class Meta:
        proxy = True
        verbose_name = "auto-drafted page awaiting review"
        verbose_name_plural = "auto-drafted pages awaiting review"


class PageVersion(models.Model):
    """A page's title and body as they were before an edit: who edited, when, why. Newest is the highest number."""

    page = models.ForeignKey(Page, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    title = models.CharField(max_length=400)
    body = models.TextField(blank=True)
    author = models.CharField(max_length=150, blank=True, help_text="Who wrote this version.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        unique_together = [("page", "number")]
        ordering = ["-number"]

    def __str__(self):
        return f"{self.page_id} v{self.number}"
