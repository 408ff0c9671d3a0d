"""Every learning table in the admin: skills curated in place, everything else read-only.

What an agent learned is evidence, so the diary, episodes, profiles, turns and events are
viewable and filterable by seat but never edited here. Synthesized skills change only through
``learning.memory.skill_actions`` (roll back as a forward step, pin/unpin, archive/restore), each of which
records an ``admin_action`` event naming the acting user; django-htmx swaps the skill panel in
place, and the same buttons post normally without JavaScript.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from core.event_types import catalogue
from core.models import Event, SpendDay
from crewlet.errors import BadInput, CrewletError, Forbidden
from learning.memory import skill_actions
from learning.models import (
    ConversationState,
    CounterpartyProfile,
    DiaryEntry,
    Duty,
    Episode,
    EpisodePiece,
    FillMinute,
    LearningHealth,
    OnboardingMarker,
    PrefetchSnapshot,
    PromotionDraft,
    RefreshLedger,
    SkillVersion,
    SynthesizedSkill,
    Turn,
)
from learning.review import skill_history

if TYPE_CHECKING:
    from crewlet.models import Seat

SKILL_PANEL_TEMPLATE = "learning/admin/_skill_panel.html"


class ReadOnlyAdmin(admin.ModelAdmin):
    """Viewable with the model's view permission; no add, change or delete from the admin."""

    exclude = ("embedding",)

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


def _pretty_json(value) -> str:
    return format_html("<pre class='json'>{}</pre>", json.dumps(value, indent=2, sort_keys=True, default=str))


def _memory_link(seat: Seat) -> str:
    if seat is None:
        return "—"
    return format_html('<a href="{}">{}</a>', reverse("learning_pages:memory", args=[seat.handle]), seat.handle)


def _parse_version(request) -> int:
    raw = request.POST.get("to_version", "")
    try:
        return int(raw)
    except ValueError:
        raise BadInput(f"to_version: choose a version to roll back to (got {raw!r})") from None


CURATE_OPS = {
    "pin": lambda skill, request: skill_actions.pin(skill=skill, actor=request.user),
    "unpin": lambda skill, request: skill_actions.unpin(skill=skill, actor=request.user),
    "archive": lambda skill, request: skill_actions.archive(skill=skill, actor=request.user),
    "restore": lambda skill, request: skill_actions.restore(skill=skill, actor=request.user),
    "rollback": lambda skill, request: skill_actions.rollback(
        skill=skill, to_version=_parse_version(request), actor=request.user
    ),
}
CURATE_NOTICES = {
    "pin": "Pinned: exempt from every automatic transition.",
    "unpin": "Unpinned.",
    "archive": "Archived: hidden from the seat's catalogue.",
    "restore": "Restored to active.",
    "rollback": "Rolled back as a forward step: now v{version}.",
}


@admin.register(SynthesizedSkill)
class SynthesizedSkillAdmin(admin.ModelAdmin):
    list_display = ("name", "seat", "state", "pinned", "version", "use_count", "last_use", "trigger")
    list_filter = ("seat", "state", "pinned", "trigger")
    search_fields = ("name", "description", "body")
    ordering = ("seat__handle", "name")
    fields = ("name", "seat_memory", "description", "trigger", "tool_sequence", "origin_turn_id", "created_at")
    readonly_fields = fields
    actions = ["pin_selected", "unpin_selected", "archive_selected", "restore_selected"]

    @admin.display(description="last use", ordering="last_used_at")
    def last_use(self, skill):
        """A skill with no counted use reads "never used", not the time it was last offered."""
        if not skill.use_count or skill.last_used_at is None:
            return "never used"
        return skill.last_used_at.strftime("%Y-%m-%d %H:%M")
    change_form_template = "admin/learning/synthesizedskill/change_form.html"

    @admin.display(description="seat")
    def seat_memory(self, skill):
        return _memory_link(skill.seat)

    def has_add_permission(self, request):
        return False  # skills are synthesized from work, never typed in

    def has_change_permission(self, request, obj=None):
        return False  # the body changes only through a versioned service, never a form save

    def has_delete_permission(self, request, obj=None):
        return False  # archive instead: a deleted skill takes its history with it

    def has_curate_permission(self, request):
        return skill_actions.can_curate(request.user)

    def _bulk(self, request, queryset, op):
        done = 0
        for skill in queryset.select_related("seat"):
            try:
                CURATE_OPS[op](skill, request)
                done += 1
            except CrewletError as exc:
                messages.error(request, f"{skill.name}: {exc.message}")
        if done:
            messages.success(request, f"{op.capitalize()}: {done} skill(s).")

    @admin.action(description="Pin selected skills", permissions=["curate"])
    def pin_selected(self, request, queryset):
        self._bulk(request, queryset, "pin")

    @admin.action(description="Unpin selected skills", permissions=["curate"])
    def unpin_selected(self, request, queryset):
        self._bulk(request, queryset, "unpin")

    @admin.action(description="Archive selected skills", permissions=["curate"])
    def archive_selected(self, request, queryset):
        self._bulk(request, queryset, "archive")

    @admin.action(description="Restore selected skills to active", permissions=["curate"])
    def restore_selected(self, request, queryset):
        self._bulk(request, queryset, "restore")

    def get_urls(self):
        curate = self.admin_site.admin_view(self.curate_view)
        return [
            path("<int:pk>/curate/<str:op>/", curate, name="learning_synthesizedskill_curate"),
            *super().get_urls(),
        ]

    def panel_context(self, request, skill, **extra) -> dict:
        return {
            "skill": skill,
            "history": skill_history.history(skill),
            "rollback_choices": skill_history.rollback_choices(skill),
            "can_curate": skill_actions.can_curate(request.user),
            **extra,
        }

    def change_view(self, request, object_id, form_url="", extra_context=None):
        skill = self.get_object(request, object_id)
        if skill is not None:
            extra_context = {**(extra_context or {}), **self.panel_context(request, skill)}
        return super().change_view(request, object_id, form_url, extra_context)

    def curate_view(self, request, pk, op):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if op not in CURATE_OPS:
            raise PermissionDenied(f"unknown curation {op!r}")
        skill = get_object_or_404(SynthesizedSkill.objects.select_related("seat"), pk=pk)
        error = notice = ""
        try:
            skill = CURATE_OPS[op](skill, request)
            notice = CURATE_NOTICES[op].format(version=skill.version)
        except Forbidden as exc:
            raise PermissionDenied(exc.message) from exc
        except CrewletError as exc:
            error = exc.message
        if request.htmx:
            context = self.panel_context(request, skill, panel_error=error, panel_notice=notice)
            return TemplateResponse(request, SKILL_PANEL_TEMPLATE, context)
        if error:
            messages.error(request, error)
        else:
            messages.success(request, notice)
        return redirect(reverse("admin:learning_synthesizedskill_change", args=[skill.pk]))


@admin.register(SkillVersion)
class SkillVersionAdmin(ReadOnlyAdmin):
    list_display = ("skill", "version", "reason", "actor", "archived_at")
    list_filter = ("skill__seat",)
    search_fields = ("skill__name", "reason", "actor")


@admin.register(DiaryEntry)
class DiaryEntryAdmin(ReadOnlyAdmin):
    list_display = ("short_content", "seat", "kind", "source", "use_count", "ttl_until", "created_at")
    list_filter = ("seat", "kind", "source")
    search_fields = ("content", "turn_id")
    date_hierarchy = "created_at"

    @admin.display(description="content")
    def short_content(self, entry):
        return entry.content if len(entry.content) <= 90 else entry.content[:90] + "…"


@admin.register(Episode)
class EpisodeAdmin(ReadOnlyAdmin):
    list_display = ("task_summary", "seat", "kind", "review_outcome", "count", "started_at")
    list_filter = ("seat", "kind", "review_outcome", "conversation_kind")
    search_fields = ("task_summary", "ask", "plan_summary", "run_id", "work_key")
    date_hierarchy = "started_at"


@admin.register(EpisodePiece)
class EpisodePieceAdmin(ReadOnlyAdmin):
    list_display = ("episode", "ordinal", "embedding_model", "embedding_dim")
    list_filter = ("embedding_model",)
    raw_id_fields = ("episode",)


@admin.register(CounterpartyProfile)
class CounterpartyProfileAdmin(ReadOnlyAdmin):
    list_display = ("subject_handle", "display_name", "observer", "subject_platform", "observations", "updated_at")
    list_filter = ("observer", "subject_platform")
    search_fields = ("subject_handle", "subject_external_id", "display_name")


@admin.register(Turn)
class TurnAdmin(ReadOnlyAdmin):
    list_display = ("run_id", "seat", "review_outcome", "conversation_kind", "received_at", "reflected_at")
    list_filter = ("seat", "review_outcome", "conversation_kind")
    search_fields = ("run_id", "work_key", "conversation_id")
    exclude = ("payload",)
    readonly_fields = ("payload_pretty",)

    @admin.display(description="payload")
    def payload_pretty(self, turn):
        return _pretty_json(turn.payload)


class EventKindFilter(admin.SimpleListFilter):
    """People's actions apart from telemetry: the catalogue says which events are audits (not best effort)."""

    title = "kind"
    parameter_name = "kind"

    def lookups(self, request, model_admin):
        return [("actions", "actions (audited)"), ("telemetry", "telemetry")]

    def queryset(self, request, queryset):
        audits = [cls.NAME for cls in catalogue() if not cls.BEST_EFFORT]
        if self.value() == "actions":
            return queryset.filter(name__in=audits)
        if self.value() == "telemetry":
            return queryset.exclude(name__in=audits)
        return queryset


@admin.register(Event)
class EventAdmin(ReadOnlyAdmin):
    list_display = ("name", "seat", "acting_user", "what", "turn_id", "created_at")
    list_filter = (EventKindFilter, "name", "seat")
    search_fields = ("name", "turn_id", "trace_id")
    date_hierarchy = "created_at"
    exclude = ("payload",)
    readonly_fields = ("payload_pretty",)

    @admin.display(description="user")
    def acting_user(self, event):
        return (event.payload or {}).get("user", "")

    @admin.display(description="what")
    def what(self, event):
        """The payload's first few fields on one line, so the list says more than names."""
        payload = event.payload if isinstance(event.payload, dict) else {}
        shown = [f"{k}={v}" for k, v in payload.items() if k != "user" and not isinstance(v, (dict, list))][:4]
        line = ", ".join(shown)
        return line if len(line) <= 120 else line[:119] + "…"

    @admin.display(description="payload")
    def payload_pretty(self, event):
        return _pretty_json(event.payload)


@admin.register(ConversationState)
class ConversationStateAdmin(ReadOnlyAdmin):
    list_display = ("conversation_id", "seat", "reflection_signal", "signal_reason", "last_skill_reflection_at")
    list_filter = ("seat", "reflection_signal")


@admin.register(OnboardingMarker)
class OnboardingMarkerAdmin(ReadOnlyAdmin):
    list_display = ("seat", "onboarded_at", "chain_hash")


@admin.register(Duty)
class DutyAdmin(ReadOnlyAdmin):
    list_display = ("name", "holder", "lease_until", "last_started_at", "last_finished_at")


@admin.register(FillMinute)
class FillMinuteAdmin(ReadOnlyAdmin):
    """What the embedding fill sent each wall-clock minute, every sender together (kept an hour)."""

    list_display = ("minute", "requests", "bytes")


@admin.register(PrefetchSnapshot)
class PrefetchSnapshotAdmin(ReadOnlyAdmin):
    list_display = ("run_id", "seat", "created_at")
    list_filter = ("seat",)
    search_fields = ("run_id",)


@admin.register(RefreshLedger)
class RefreshLedgerAdmin(ReadOnlyAdmin):
    list_display = ("run_id", "seat", "spent", "updated_at")
    list_filter = ("seat",)
    search_fields = ("run_id",)


@admin.register(PromotionDraft)
class PromotionDraftAdmin(ReadOnlyAdmin):
    """What the promotion pass drafted per cluster and the skills it saw (why a rejected draft stays away)."""

    list_display = ("title", "unit", "page_id", "drafts", "updated_at")
    list_filter = ("unit",)
    search_fields = ("title",)


@admin.register(SpendDay)
class SpendDayAdmin(ReadOnlyAdmin):
    """Auxiliary spend rolled up a day at a time by the event retention sweep."""

    list_display = ("day", "seat", "stage", "purpose", "provider", "model", "outcome", "calls", "input_tokens",
                    "output_tokens")
    list_filter = ("stage", "purpose")
    date_hierarchy = "day"


@admin.register(LearningHealth)
class LearningHealthAdmin(ReadOnlyAdmin):
    """The ``learning_health`` view; the dashboard at /learning/health/ draws it with the threshold."""

    exclude = ()  # type: ignore[assignment]  # the view has no embedding column to hide
    list_display = (
        "seat",
        "total_skills",
        "skills_used_at_least_once",
        "total_skill_uses",
        "uses_per_skill",
        "age_days",
        "most_recent_skill_use",
    )
    fields = list_display
    readonly_fields = list_display

    @admin.display(description="avg uses / skill", ordering="avg_uses_per_skill")
    def uses_per_skill(self, row):
        if row.avg_uses_per_skill is None:
            return "— (no skills)" if not row.total_skills else "unknown"
        return f"{row.avg_uses_per_skill:.2f}"

    @admin.display(description="avg skill age (days)", ordering="avg_skill_age_days")
    def age_days(self, row):
        if row.avg_skill_age_days is None:
            return "— (no skills)" if not row.total_skills else "unknown"
        return f"{max(0.0, row.avg_skill_age_days):,.1f}"
