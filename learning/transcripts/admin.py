"""Leads review shards and recommendations here; every action is recorded naming the acting user."""

from __future__ import annotations

from django.contrib import admin, messages
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from core import events
from core.providers.errors import ProviderError
from core.purposes import AnswerUnparseable
from crewlet.errors import CrewletError
from learning.transcripts import ladder
from learning.transcripts.artifacts import install, review_recommendation
from learning.transcripts.events import TranscriptsAdminAction
from learning.transcripts.models import (
    Recommendation,
    Shard,
    TranscriptEpisode,
    TranscriptSession,
    TranscriptSource,
)
from learning.transcripts.telemetry import render_uses


def _record(request, action: str, obj, **payload) -> None:
    events.publish(
        TranscriptsAdminAction(action=action, object_id=obj.pk, user=request.user.get_username(), **payload), seat=obj.seat
    )


def _each(modeladmin, request, queryset, action: str, run):
    for obj in queryset:
        try:
            result = run(obj)
        except (CrewletError, ProviderError, AnswerUnparseable) as exc:
            modeladmin.message_user(request, f"#{obj.pk}: {exc}", messages.ERROR)
            continue
        _record(request, action, obj, result={k: v for k, v in result.items() if k not in ("contents", "diff")})
        wrote = f" (wrote {result['wrote_bytes']} bytes)" if "wrote_bytes" in result else ""
        modeladmin.message_user(request, f"#{obj.pk}: {action} → {result.get('status')}{wrote} {result.get('reason', '')}".strip())


class _ActionsOnly(admin.ModelAdmin):
    """Every field read-only: a row's state changes only through the review actions (each gated on ``change``)."""

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in self.model._meta.concrete_fields if f.name not in (self.exclude or ())] + list(self.extra_readonly)

    extra_readonly: tuple = ()

    def has_add_permission(self, request):
        return False

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        extra = {"show_save": False, "show_save_and_continue": False, "show_save_and_add_another": False, **(extra_context or {})}
        return super().changeform_view(request, object_id, form_url, extra)

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Shard)
class ShardAdmin(_ActionsOnly):
    list_display = ("id", "text", "status", "reason", "sources", "seat", "tier", "scope", "created_at")
    list_filter = ("status", "tier", "seat")
    search_fields = ("text", "session_id")
    exclude = ("embedding", "embed_pieces", "embed_held_until")
    extra_readonly = ("sources",)
    actions = ["publish", "reject"]

    @admin.display(description="source sessions")
    def sources(self, obj):
        return ", ".join(obj.evidence.get("sources") or [obj.session_id])

    @admin.action(description="Submit to the judge (publish_memory)", permissions=["change"])
    def publish(self, request, queryset):
        who = f"user:{request.user.get_username()}"
        _each(self, request, queryset, "publish_memory", lambda s: ladder.publish_memory(shard=s, stage="operator", submitted_by=who))

    @admin.action(description="Reject (reject_memory)", permissions=["change"])
    def reject(self, request, queryset):
        who = f"user:{request.user.get_username()}"
        _each(self, request, queryset, "reject_memory", lambda s: ladder.reject_memory(shard=s, by=Shard.BY_PERSON, actor=who))


@admin.register(Recommendation)
class RecommendationAdmin(_ActionsOnly):
    list_display = ("id", "tier", "mode", "target_path", "scope", "status", "uses_shown", "later_sessions", "retirement_proposed_at")
    list_filter = ("status", "tier", "mode")
    exclude = ("diff",)
    extra_readonly = ("rendered_diff", "uses_shown", "lesson_texts")
    actions = ["approve", "reject", "install_file"]

    def get_fields(self, request, obj=None):
        first = ["rendered_diff", "status", "tier", "mode", "target_path", "lesson_texts"]
        return first + [f for f in self.get_readonly_fields(request, obj) if f not in first and f != "uses"]

    @admin.display(description="lessons")
    def lesson_texts(self, obj):
        return format_html_join(mark_safe("<br>"), "#{} {}", ((s.pk, s.text) for s in obj.lessons.all()))

    @admin.display(description="uses")
    def uses_shown(self, obj):
        return render_uses(obj.uses)

    @admin.display(description="diff")
    def rendered_diff(self, obj):
        return format_html('<pre style="white-space:pre-wrap">{}</pre>', obj.diff or "(no change)")

    @admin.action(description="Approve (writes nothing; shows the contents to apply)", permissions=["change"])
    def approve(self, request, queryset):
        _each(self, request, queryset, "approve", lambda r: review_recommendation(recommendation=r, approve=True, user=request.user))

    @admin.action(description="Reject", permissions=["change"])
    def reject(self, request, queryset):
        _each(self, request, queryset, "reject", lambda r: review_recommendation(recommendation=r, approve=False, user=request.user))

    @admin.action(description="Install the new private file (additive; never overwrites)", permissions=["change"])
    def install_file(self, request, queryset):
        _each(self, request, queryset, "install", lambda r: install(recommendation=r, user=request.user))


@admin.register(TranscriptEpisode)
class EpisodeAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "ask", "session", "started_at", "extracted_at")
    list_filter = ("kind",)
    search_fields = ("ask", "correction")


@admin.register(TranscriptSession)
class SessionAdmin(admin.ModelAdmin):
    list_display = ("session_id", "seat", "started_at", "human_messages", "pseudo_user")


@admin.register(TranscriptSource)
class SourceAdmin(admin.ModelAdmin):
    list_display = ("path", "adapter", "seat", "read_at")
    readonly_fields = ("watermark",)
