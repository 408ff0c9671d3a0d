"""Read-only admin over every learning table: what each seat learned, as stored.

Rows are written only by the learning services (and events only by ``events.publish``), so the
admin shows them and changes nothing. Vectors are left out of the pages; their model and width show.
"""

from django.contrib import admin

from learning import models as m

VECTOR_FIELDS = ("embedding",)


class ReadOnlyAdmin(admin.ModelAdmin):
    exclude = VECTOR_FIELDS

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class PlainReadOnlyAdmin(ReadOnlyAdmin):
    exclude = ()


@admin.register(m.DiaryEntry)
class DiaryEntryAdmin(ReadOnlyAdmin):
    list_display = ("seat", "kind", "short_content", "source", "embedding_model", "embedding_dim", "created_at")
    list_filter = ("seat", "kind", "source", "embedding_model")
    search_fields = ("content", "turn_id", "seat__handle")
    date_hierarchy = "created_at"

    @admin.display(description="content")
    def short_content(self, obj):
        return obj.content[:100]


@admin.register(m.Episode)
class EpisodeAdmin(ReadOnlyAdmin):
    list_display = ("seat", "kind", "task_summary", "review_outcome", "started_at", "embedding_model")
    list_filter = ("seat", "kind", "review_outcome")
    search_fields = ("task_summary", "ask", "plan_summary", "run_id", "work_item", "seat__handle")
    date_hierarchy = "started_at"


@admin.register(m.Event)
class EventAdmin(PlainReadOnlyAdmin):
    list_display = ("name", "seat", "turn_id", "created_at")
    list_filter = ("name", "seat")
    search_fields = ("name", "turn_id", "trace_id", "seat__handle")
    date_hierarchy = "created_at"


@admin.register(m.SynthesizedSkill)
class SynthesizedSkillAdmin(PlainReadOnlyAdmin):
    list_display = ("name", "seat", "state", "version", "pinned", "use_count", "trigger", "updated_at")
    list_filter = ("seat", "state", "trigger", "pinned")
    search_fields = ("name", "description", "body", "seat__handle")


@admin.register(m.SkillVersion)
class SkillVersionAdmin(PlainReadOnlyAdmin):
    list_display = ("skill", "version", "reason", "actor", "archived_at")
    list_filter = ("skill__seat",)
    search_fields = ("skill__name", "reason", "actor")


@admin.register(m.CounterpartyProfile)
class CounterpartyProfileAdmin(PlainReadOnlyAdmin):
    list_display = ("observer", "subject_handle", "subject_platform", "display_name", "observations", "updated_at")
    list_filter = ("observer", "subject_platform")
    search_fields = ("subject_handle", "subject_external_id", "display_name", "observer__handle")


@admin.register(m.OnboardingMarker)
class OnboardingMarkerAdmin(PlainReadOnlyAdmin):
    list_display = ("seat", "chain_hash", "onboarded_at")
    list_filter = ("seat",)
    search_fields = ("seat__handle", "chain_hash")


@admin.register(m.Turn)
class TurnAdmin(PlainReadOnlyAdmin):
    list_display = ("run_id", "seat", "conversation_kind", "review_outcome", "received_at", "reflected_at")
    list_filter = ("seat", "review_outcome", "conversation_kind")
    search_fields = ("run_id", "work_key", "conversation_id", "seat__handle")
    date_hierarchy = "received_at"


@admin.register(m.ConversationState)
class ConversationStateAdmin(PlainReadOnlyAdmin):
    list_display = ("seat", "conversation_id", "reflection_signal", "signal_reason", "last_skill_reflection_at")
    list_filter = ("seat", "reflection_signal")
    search_fields = ("conversation_id", "seat__handle")


@admin.register(m.PrefetchSnapshot)
class PrefetchSnapshotAdmin(PlainReadOnlyAdmin):
    list_display = ("run_id", "seat", "created_at")
    list_filter = ("seat",)
    search_fields = ("run_id", "seat__handle")


@admin.register(m.RefreshLedger)
class RefreshLedgerAdmin(PlainReadOnlyAdmin):
    list_display = ("run_id", "seat", "spent", "updated_at")
    list_filter = ("seat",)
    search_fields = ("run_id", "seat__handle")


@admin.register(m.Duty)
class DutyAdmin(PlainReadOnlyAdmin):
    """Background passes' claims (fleet-wide, no seat)."""

    list_display = ("name", "holder", "lease_until", "last_started_at", "last_finished_at")
    search_fields = ("name", "holder")


@admin.register(m.SeatReflectionLock)
class SeatReflectionLockAdmin(PlainReadOnlyAdmin):
    list_display = ("seat", "holder", "lease_until")
