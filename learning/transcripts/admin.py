"""Leads review shards and recommendations here; every action is recorded naming the acting user."""

from __future__ import annotations

from django.contrib import admin, messages
from django.utils.html import format_html

from core import events
from core.event_types import TranscriptsAdminAction
from core.providers.errors import ProviderError
from core.purposes import AnswerUnparseable
from crewlet.errors import CrewletError
from learning.transcripts import ladder
from learning.transcripts.artifacts import install, review_recommendation
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
        modeladmin.message_user(request, f"#{obj.pk}: {action} → {result.get('status')} {result.get('reason', '')}".strip())


@admin.register(Shard)
class ShardAdmin(admin.ModelAdmin):
    list_display = ("id", "text", "status", "reason", "session_id", "seat", "tier", "scope", "created_at")
    list_filter = ("status", "tier", "seat")
    search_fields = ("text", "session_id")
    readonly_fields = ("embedding_model", "embedding_dim", "evidence", "judge_verdict", "absorbed_into", "episode")
    exclude = ("embedding", "embed_pieces", "embed_held_until")
    actions = ["publish", "reject"]

    @admin.action(description="Submit to the judge (publish_memory)")
    def publish(self, request, queryset):
        who = f"user:{request.user.get_username()}"
        _each(self, request, queryset, "publish_memory", lambda s: ladder.publish_memory(shard=s, stage="operator", submitted_by=who))

    @admin.action(description="Reject (reject_memory)")
    def reject(self, request, queryset):
        who = f"user:{request.user.get_username()}"
        _each(self, request, queryset, "reject_memory", lambda s: ladder.reject_memory(shard=s, by=Shard.BY_PERSON, actor=who))


@admin.register(Recommendation)
class RecommendationAdmin(admin.ModelAdmin):
    list_display = ("id", "tier", "mode", "target_path", "scope", "status", "uses_shown", "later_sessions", "retirement_proposed_at")
    list_filter = ("status", "tier", "mode")
    readonly_fields = ("rendered_diff", "contents", "existing", "notes", "draft", "uses_shown", "landed_at", "installed_at", "reviewed_by", "reviewed_at")
    exclude = ("diff",)
    filter_horizontal = ("lessons",)
    actions = ["approve", "reject", "install_file"]

    @admin.display(description="uses")
    def uses_shown(self, obj):
        return render_uses(obj.uses)

    @admin.display(description="diff")
    def rendered_diff(self, obj):
        return format_html('<pre style="white-space:pre-wrap">{}</pre>', obj.diff or "(no change)")

    @admin.action(description="Approve (writes nothing; shows the contents to apply)")
    def approve(self, request, queryset):
        _each(self, request, queryset, "approve", lambda r: review_recommendation(recommendation=r, approve=True, user=request.user))

    @admin.action(description="Reject")
    def reject(self, request, queryset):
        _each(self, request, queryset, "reject", lambda r: review_recommendation(recommendation=r, approve=False, user=request.user))

    @admin.action(description="Install the new private file (additive; never overwrites)")
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
