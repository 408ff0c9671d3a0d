"""A plain listing of knowledge pages; the leads' review workflow (publish/reject) builds on it."""

from django.contrib import admin

from knowledge.models import Page


@admin.register(Page)
class PageAdmin(admin.ModelAdmin):
    list_display = ("title", "container_key", "state", "parent", "author", "updated_at")
    list_filter = ("state", "container_key")
    search_fields = ("title", "body")
    readonly_fields = ("source", "embedding_model", "embedding_dim", "created_at", "updated_at")
    exclude = ("embedding", "embed_held_until", "embed_pieces")
