"""The leads' review queue of auto-drafted pages, and the knowledge base's pages.

Thin: every decision is ``knowledge.review.publish_draft`` / ``reject_draft``, which check the
``knowledge.publish_page`` permission themselves; the admin only hides what a user may not do.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from crewlet.errors import CrewletError, Forbidden
from knowledge import review
from knowledge.models import AUTO_DRAFTED_PARENT, DraftPage, Page
from knowledge.render import render_body


def _source_list(page: Page, key: str) -> list:
    value = (page.source or {}).get(key) or []
    return value if isinstance(value, list) else [value]


class _PageDisplay:
    """Columns both admins show."""

    @admin.display(description="from skills")
    def source_skills(self, page):
        return ", ".join(str(s) for s in _source_list(page, "skills")) or "—"

    @admin.display(description="from seats")
    def source_seats(self, page):
        seats = _source_list(page, "seats")
        return f"{len(seats)}: " + ", ".join(str(s) for s in seats) if seats else "—"

    @admin.display(description="body")
    def rendered_body(self, page):
        return format_html('<div class="kb-body">{}</div>', render_body(page.body))

    @admin.display(description="converged from")
    def provenance(self, page):
        skills, seats = _source_list(page, "skills"), _source_list(page, "seats")
        if not skills and not seats:
            return "—"
        return format_html(
            '<div><strong>{} distinct seats:</strong> {}</div><div><strong>{} skills:</strong></div>'
            '<div class="provenance-skills">{}</div>',
            len(seats),
            ", ".join(str(s) for s in seats) or "—",
            len(skills),
            format_html_join("", "<code>{}</code>", ((s,) for s in skills)) or "—",
        )


def _run(request, action, pages) -> int:
    done = 0
    for page in pages:
        try:
            action(page=page, user=request.user)
            done += 1
        except CrewletError as exc:
            messages.error(request, f"{page.title}: {exc.message}")
    return done


@admin.register(DraftPage)
class DraftPageAdmin(_PageDisplay, admin.ModelAdmin):
    """Drafts awaiting a lead's decision, with the skills and seats each came from."""

    list_display = ("title", "container_key", "source_seats", "source_skills", "created_at")
    list_filter = ("container_key",)
    search_fields = ("title", "body")
    ordering = ("-created_at",)
    readonly_fields = ("title", "container_key", "parent", "provenance", "rendered_body", "author", "created_at")
    fields = readonly_fields
    actions = ["publish_selected", "reject_selected"]
    change_form_template = "admin/knowledge/draftpage/change_form.html"

    def get_queryset(self, request):
        return super().get_queryset(request).filter(pk__in=review.review_queue().values("pk"))

    def has_add_permission(self, request):
        return False  # drafts come from the promotion pass, never from a form

    def has_change_permission(self, request, obj=None):
        return False  # a draft is read, then published or rejected, not edited in place

    def has_delete_permission(self, request, obj=None):
        return False  # rejecting is the one way a draft goes, so it is announced

    def has_publish_permission(self, request):
        return review.can_publish(request.user)

    @admin.action(description="Publish selected drafts", permissions=["publish"])
    def publish_selected(self, request, queryset):
        done = _run(request, review.publish_draft, queryset)
        if done:
            messages.success(request, f"Published {done} page(s); agents can now find them.")

    @admin.action(description="Reject (delete) selected drafts", permissions=["publish"])
    def reject_selected(self, request, queryset):
        done = _run(request, review.reject_draft, queryset)
        if done:
            messages.success(request, f"Rejected {done} draft(s).")

    def get_urls(self):
        return [
            path("<int:pk>/publish/", self.admin_site.admin_view(self.publish_view), name="knowledge_draftpage_publish"),
            path("<int:pk>/reject/", self.admin_site.admin_view(self.reject_view), name="knowledge_draftpage_reject"),
            *super().get_urls(),
        ]

    def _decide(self, request, pk, action, done_message):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        page = get_object_or_404(review.review_queue(), pk=pk)
        try:
            action(page=page, user=request.user)
        except Forbidden as exc:
            raise PermissionDenied(exc.message) from exc
        except CrewletError as exc:
            messages.error(request, exc.message)
            return redirect(reverse("admin:knowledge_draftpage_change", args=[pk]))
        messages.success(request, done_message.format(title=page.title))
        return redirect(reverse("admin:knowledge_draftpage_changelist"))

    def publish_view(self, request, pk):
        return self._decide(request, pk, review.publish_draft, "Published “{title}”; agents can now find it.")

    def reject_view(self, request, pk):
        return self._decide(request, pk, review.reject_draft, "Rejected “{title}”.")

    def render_change_form(self, request, context, *args, **kwargs):
        context["can_publish"] = review.can_publish(request.user)
        return super().render_change_form(request, context, *args, **kwargs)

    def changelist_view(self, request, extra_context=None):
        extra_context = {**(extra_context or {}), "can_publish": review.can_publish(request.user)}
        return super().changelist_view(request, extra_context)


@admin.register(Page)
class PageAdmin(_PageDisplay, admin.ModelAdmin):
    """Every page, published ones included; an auto-draft's decision is made in the review queue."""

    list_display = ("title", "container_key", "state", "parent", "source_seats", "updated_at")
    list_filter = ("state", "container_key")
    search_fields = ("title", "body")
    ordering = ("container_key", "title")
    readonly_fields = ("provenance", "rendered_body", "embedding_model", "embedding_dim", "created_at", "updated_at")
    fields = ("container_key", "title", "parent", "state", "author", "labels", "body", *readonly_fields)
    raw_id_fields = ("parent",)
    actions = ["publish_selected"]

    def has_publish_permission(self, request):
        return review.can_publish(request.user)

    @admin.action(description="Publish selected auto-drafts", permissions=["publish"])
    def publish_selected(self, request, queryset):
        done = _run(request, review.publish_draft, queryset)
        if done:
            messages.success(request, f"Published {done} page(s).")

    def save_model(self, request, obj, form, change):
        review.save_page(page=obj, user=request.user, created=not change)

    def delete_model(self, request, obj):
        self._delete(request, [obj])

    def delete_queryset(self, request, queryset):
        self._delete(request, list(queryset))

    def _delete(self, request, pages):
        drafts = [p for p in pages if p.state == Page.DRAFT and p.title != AUTO_DRAFTED_PARENT]
        if drafts:
            _run(request, review.reject_draft, drafts)  # a deleted draft is a rejection, by a lead
        try:
            review.delete_pages(pages=[p for p in pages if p not in drafts], user=request.user)
        except CrewletError as exc:
            messages.error(request, exc.message)

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and obj.state == Page.DRAFT:
            return [f for f in self.fields]  # a draft's state changes only through publish/reject
        return self.readonly_fields

