"""Admin for the organisation. crewlet.toml is the source of truth for company, units, roles and
seats (an apply upserts them), so edits here last until the next apply; tokens are issued by
``manage.py create_seat_token`` and only their prefix and hash are ever shown."""

from django.contrib import admin

from crewlet.models import ApiToken, Company, ConfigRevision, Role, Seat, Unit


@admin.register(Company)
class CompanyAdmin(admin.ModelAdmin):
    list_display = ("name", "learning_enabled", "token_budget", "budget_window")
    search_fields = ("name",)


@admin.register(Unit)
class UnitAdmin(admin.ModelAdmin):
    list_display = ("key", "name", "company", "parent", "knowledge_container", "tracker_key")
    list_filter = ("company",)
    search_fields = ("key", "name", "knowledge_container", "tracker_key")


@admin.register(Role)
class RoleAdmin(admin.ModelAdmin):
    list_display = ("name", "company", "learning_enabled", "token_budget")
    list_filter = ("company", "learning_enabled")
    search_fields = ("name",)


@admin.register(Seat)
class SeatAdmin(admin.ModelAdmin):
    list_display = ("handle", "display_name", "company", "role", "unit", "active", "created_at")
    list_filter = ("company", "role", "unit", "active")
    search_fields = ("handle", "display_name")


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Revoke or relabel a token here; the raw value exists only in the issuing command's output."""

    list_display = ("prefix", "kind", "seat", "company", "label", "created_at", "expires_at", "last_used_at", "revoked")
    list_filter = ("kind", "revoked", "company")
    search_fields = ("prefix", "label", "seat__handle")
    fields = ("prefix", "kind", "seat", "company", "token_hash", "label", "created_at", "expires_at", "last_used_at",
              "revoked")
    readonly_fields = ("prefix", "kind", "seat", "company", "token_hash", "created_at", "last_used_at")

    def has_add_permission(self, request):
        return False


@admin.register(ConfigRevision)
class ConfigRevisionAdmin(admin.ModelAdmin):
    list_display = ("sha256", "path", "applied_at")
    search_fields = ("sha256", "path")
    readonly_fields = ("sha256", "path", "applied_at", "content", "summary")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
