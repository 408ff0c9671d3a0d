"""Admin for the organisation. crewlet.toml is the source of truth for company, units, roles and
seats (an apply upserts them), so edits here last until the next apply; tokens are issued by
``manage.py create_seat_token`` and only their prefix and hash are ever shown."""

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from crewlet.config import edit as config_edit
from crewlet.errors import Forbidden
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
    """Revisions are read-only; "Add" opens the config file in an editor (``crewlet.config.edit``)."""

    list_display = ("sha256", "path", "applied_at", "applied_by", "applied_via")
    search_fields = ("sha256", "path", "applied_via")
    readonly_fields = ("sha256", "path", "applied_at", "applied_by", "applied_via", "content", "summary")

    def has_add_permission(self, request):
        return config_edit.can_edit(request.user)

    def add_view(self, request, form_url="", extra_context=None):
        if not self.has_add_permission(request):
            raise PermissionDenied("editing the config needs crewlet.add_configrevision")
        text, refusal = config_edit.editor_text(), None
        if request.method == "POST":
            text = request.POST.get("content", "")
            try:
                revision = config_edit.save(text, user=request.user)
            except Forbidden as exc:
                raise PermissionDenied(exc.message) from exc
            except config_edit.EditRefused as exc:
                refusal = exc
            else:
                url = reverse("admin:crewlet_configrevision_change", args=[revision.pk])
                messages.success(request, format_html(
                    'Applied revision <a href="{}" id="applied-revision">{}</a> and wrote it to {}.',
                    url, revision.sha256[:12], revision.path))
                return redirect(url)
        context = {
            **self.admin_site.each_context(request), "opts": self.model._meta, "title": "Edit crewlet.toml",
            "content": text, "refusal": refusal, "serving": config_edit.serving_revision(),
            "path": config_edit.runtime.config_path(),
        }
        return TemplateResponse(request, "admin/crewlet/configrevision/edit.html", context,
                                status=400 if refusal else 200)

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
