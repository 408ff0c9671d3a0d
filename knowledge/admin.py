"""The leads' review queue of auto-drafted pages, and the knowledge base's pages.

Thin: every decision is ``knowledge.review.publish_draft`` / ``reject_draft``, which check the
``knowledge.publish_page`` permission themselves; the admin only hides what a user may not do.
"""

from __future__ import annotations

import json

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
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
        return format_html_join(", ", "{}", ((_skill_link(s),) for s in _source_list(page, "skills"))) or "—"

    @admin.display(description="from seats")
    def source_seats(self, page):
        seats = _source_list(page, "seats")
        if not seats:
            return "—"
        return format_html("{}: {}", len(seats), format_html_join(", ", "{}", ((_seat_link(s),) for s in seats)))

    @admin.display(description="body")
    def rendered_body(self, page):
        return format_html('<div class="kb-body">{}</div>', render_body(page.body))

    @admin.display(description="converged from")
    def provenance(self, page):
        skills, seats = _source_list(page, "skills"), _source_list(page, "seats")
        if not skills and not seats:
            return "—"
        rows = format_html_join(
            "", '<div class="provenance-skill">{}{}</div>',
            ((_skill_link(s),
              format_html(" · drafted from turn {}", _turn_link(s)) if isinstance(s, dict) and s.get("turn") else "")
             for s in skills),
        )
        return format_html(
            '<div class="provenance"><p><strong>{} distinct seats:</strong> {}</p><p><strong>{} skills:</strong></p>{}</div>',
            len(seats), format_html_join(", ", "{}", ((_seat_link(s),) for s in seats)) or "—", len(skills), rows,
        )

    @admin.display(description="versions")
    def version_history(self, page):
        versions = list(page.versions.all()) if page.pk else []
        if not versions:
            return "only the version as drafted"
        return format_html('<ol class="page-versions">{}</ol>', format_html_join(
            "", '<li value="{}">v{} by <strong>{}</strong>, {}</li>',
            ((v.number, v.number, v.author or "unknown", v.created_at.strftime("%Y-%m-%d %H:%M")) for v in versions)))


def _seat_link(handle) -> str:
    if not handle:
        return "—"
    return format_html('<a href="{}">{}</a>', reverse("learning_pages:memory", args=[str(handle)]), handle)


def _skill_link(skill) -> str:
    """A skill named in a draft's provenance: {"id", "name", "seat"} links to its history; older text stays text."""
    if isinstance(skill, dict) and skill.get("id"):
        label = f"{skill.get('seat', '?')}: {skill.get('name', skill['id'])}"
        return format_html('<a href="{}">{}</a>', reverse("admin:learning_synthesizedskill_change", args=[skill["id"]]), label)
    return format_html("<code>{}</code>", skill)


def _turn_link(skill: dict) -> str:
    return format_html('<a href="{}">{}</a>', reverse("learning_pages:turn", args=[skill.get("seat", ""), skill["turn"]]),
                       skill["turn"])


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
    readonly_fields = ("title", "container_key", "parent", "provenance", "version_history", "rendered_body", "author",
                       "created_at")
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
        containers = sorted(set(queryset.values_list("container_key", flat=True)))
        done = _run(request, review.publish_draft, queryset)
        if done:
            who = "; ".join(f"{key}: {review.readers_sentence(key)}" for key in containers)
            messages.success(request, f"Published {done} page(s). {who}.")

    @admin.action(description="Reject (delete) selected drafts", permissions=["publish"])
    def reject_selected(self, request, queryset):
        done = _run(request, review.reject_draft, queryset)
        if done:
            messages.success(request, f"Rejected {done} draft(s).")

    def get_urls(self):
        return [
            path("<int:pk>/publish/", self.admin_site.admin_view(self.publish_view), name="knowledge_draftpage_publish"),
            path("<int:pk>/reject/", self.admin_site.admin_view(self.reject_view), name="knowledge_draftpage_reject"),
            path("<int:pk>/edit/", self.admin_site.admin_view(self.edit_view), name="knowledge_draftpage_edit"),
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
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        page = get_object_or_404(review.review_queue(), pk=pk)
        try:
            published = review.publish_draft(page=page, user=request.user)
        except Forbidden as exc:
            raise PermissionDenied(exc.message) from exc
        except CrewletError as exc:
            messages.error(request, exc.message)
            return redirect(reverse("admin:knowledge_draftpage_change", args=[pk]))
        self.log_change(request, published, "Published the auto-draft")  # the index's "Recent actions"
        url = reverse("admin:knowledge_page_change", args=[published.pk])
        messages.success(request, format_html('Published <a href="{}" id="published-link">“{}”</a> to {}; {}.',
                                              url, published.title, published.container_key,
                                              review.readers_sentence(published.container_key)))
        return redirect(url)

    def edit_view(self, request, pk):
        """Edit a draft's title and body before publishing: each save is a version naming the lead."""
        page = get_object_or_404(review.review_queue(), pk=pk)
        if not review.can_publish(request.user):
            raise PermissionDenied("only a lead can edit a draft")
        error = ""
        title, body = page.title, page.body
        if request.method == "POST":
            title, body = request.POST.get("title", ""), request.POST.get("body", "")
            try:
                review.edit_draft(page=page, user=request.user, title=title, body=body)
            except CrewletError as exc:
                error = exc.message
            else:
                self.log_change(request, page, "Edited the draft (a new version)")
                messages.success(request, "Saved as a new version.")
                return redirect(reverse("admin:knowledge_draftpage_change", args=[pk]))
        context = {**self.admin_site.each_context(request), "opts": self.model._meta, "original": page,
                   "title": f"Edit {page.title}", "draft_title": title, "draft_body": body, "error": error}
        return TemplateResponse(request, "admin/knowledge/draftpage/edit.html", context, status=400 if error else 200)

    def reject_view(self, request, pk):
        return self._decide(request, pk, review.reject_draft, "Rejected “{title}”.")

    def render_change_form(self, request, context, *args, **kwargs):
        context["can_publish"] = review.can_publish(request.user)
        original = context.get("original")
        if original is not None:
            context["readers"] = review.readers_sentence(original.container_key).replace(" can now find", " can find")
        return super().render_change_form(request, context, *args, **kwargs)

    def changelist_view(self, request, extra_context=None):
        extra_context = {**(extra_context or {}), "can_publish": review.can_publish(request.user)}
        return super().changelist_view(request, extra_context)


class LabelsField(forms.CharField):
    """A page's labels as one line of words separated by commas (stored as a JSON list)."""

    def prepare_value(self, value):
        return ", ".join(str(v) for v in value) if isinstance(value, list) else (value or "")

    def to_python(self, value):
        value = (value or "").strip()
        if value.startswith("["):  # a JSON list, as the API and older forms send it
            try:
                parsed = json.loads(value)
            except ValueError:
                raise forms.ValidationError("labels: not a JSON list; write words separated by commas") from None
            return [str(v).strip() for v in parsed if str(v).strip()] if isinstance(parsed, list) else []
        return [label for label in (part.strip() for part in value.split(",")) if label]


class PageForm(forms.ModelForm):
    labels = LabelsField(required=False, help_text="Words separated by commas, e.g. deploy, runbook.")

    class Meta:
        model = Page
        fields = "__all__"


@admin.register(Page)
class PageAdmin(_PageDisplay, admin.ModelAdmin):
    """Every page, published ones included; an auto-draft's decision is made in the review queue."""

    form = PageForm

    list_display = ("title", "container_key", "state", "parent", "source_seats", "updated_at")
    list_filter = ("state", "container_key")
    search_fields = ("title", "body")
    ordering = ("container_key", "title")
    # state is never set in the form: a page is published by the review path (``knowledge.review``)
    readonly_fields = ("state", "read_by", "provenance", "version_history", "rendered_body", "embedding_model",
                       "embedding_dim", "created_at", "updated_at")
    fields = ("container_key", "title", "parent", "author", "labels", "body", *readonly_fields)
    raw_id_fields = ("parent",)
    actions = ["publish_selected"]

    def has_publish_permission(self, request):
        return review.can_publish(request.user)

    @admin.display(description="agents who can read it")
    def read_by(self, page):
        if not page.pk:
            return "—"
        if page.state != Page.PUBLISHED:
            return "none while it is a draft (drafts are hidden from every agent's search)"
        return review.readers_sentence(page.container_key).replace(" can now find", " can find")

    @admin.action(description="Publish selected auto-drafts", permissions=["publish"])
    def publish_selected(self, request, queryset):
        containers = sorted(set(queryset.values_list("container_key", flat=True)))
        done = _run(request, review.publish_draft, queryset)
        if done:
            who = "; ".join(f"{key}: {review.readers_sentence(key)}" for key in containers)
            messages.success(request, f"Published {done} page(s). {who}.")

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

    def has_change_permission(self, request, obj=None):
        """A published page is what agents read: only a lead changes it (anyone else sees it read-only)."""
        if obj is not None and obj.state == Page.PUBLISHED and not review.can_publish(request.user):
            return False
        return super().has_change_permission(request, obj)

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and obj.state == Page.DRAFT:
            return [f for f in self.fields]  # a draft's state changes only through publish/reject
        return self.readonly_fields

