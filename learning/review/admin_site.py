"""The admin as a lead meets it: "View site" lands on the lead's home, the index leads with what waits
for review, and the internals (duties, locks, ledgers, snapshots, the task queue) are grouped apart."""

from __future__ import annotations

from django.contrib.admin import AdminSite
from django.contrib.admin.apps import AdminConfig

INTERNALS = {
    ("django_q", "Schedule"), ("django_q", "Success"), ("django_q", "Failure"), ("django_q", "OrmQ"),
    ("learning", "ConversationState"), ("learning", "OnboardingMarker"), ("learning", "Duty"),
    ("learning", "PrefetchSnapshot"), ("learning", "RefreshLedger"), ("learning", "FillMinute"),
    ("learning", "EpisodePiece"), ("learning", "PromotionDraft"), ("learning", "LearningHealth"),
    ("learning", "SkillVersion"), ("core", "Event"), ("core", "SpendDay"),
    ("transcripts", "TranscriptSource"), ("transcripts", "TranscriptSession"),
}


class LeadAdminSite(AdminSite):
    site_header = "Crewlet administration"
    site_url = "/learning/"
    index_template = "admin/lead_index.html"

    def get_app_list(self, request, app_label=None):
        apps = super().get_app_list(request, app_label)
        if app_label:
            return apps
        internals: list[dict] = []
        for app in apps:
            keep: list[dict] = []
            for model in app["models"]:
                (internals if (app["app_label"], model["object_name"]) in INTERNALS else keep).append(model)
            app["models"] = keep
        apps = [app for app in apps if app["models"]]
        if internals:
            apps.append({"name": "Internals", "app_label": "internals", "app_url": "#internals",
                         "has_module_perms": True, "models": internals})
        return apps

    def index(self, request, extra_context=None):
        from learning.review.pages.home import waiting

        return super().index(request, {**(extra_context or {}), "waiting": waiting()})


class LeadAdminConfig(AdminConfig):
    default_site = "learning.review.admin_site.LeadAdminSite"
