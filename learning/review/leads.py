"""The ``leads`` group: the people who review what crosses into shared space.

A lead reads every learning table, curates synthesized skills (roll back, pin, archive), forgets or
corrects a seat's diary note,
publishes or rejects auto-drafted pages, edits crewlet.toml (validated, then applied), and reviews transcript lessons: submits a candidate shard
to the judge or rejects it, approves (writing nothing) or installs (additive files only) an
artifact recommendation. Those are admin actions gated on ``change``; every field of a shard or a
recommendation is read-only in its form, so state moves only through the actions. Staff who are
not leads may read what their own permissions allow, but cannot publish: ``knowledge.publish_page``
is granted only here.
"""

from __future__ import annotations

from django.apps import apps
from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.db import transaction

LEADS_GROUP = "leads"

# codename per app label; every learning model (and the event log in core) is viewable, only skills are curated.
LEAD_GRANTS = {
    "knowledge": ["view_page", "add_page", "change_page", "delete_page", "publish_page", "view_draftpage", "change_draftpage"],
    "learning": ["change_synthesizedskill", "change_diaryentry", "delete_diaryentry"],
    "transcripts": ["change_shard", "change_recommendation"],
    "crewlet": ["view_configrevision", "add_configrevision"],  # read and edit crewlet.toml in the admin
}
VIEW_ALL_OF = ("learning", "core", "transcripts")


def _ensure_permissions() -> None:
    """Permissions are created after migrate; make sure they exist when called straight after it."""
    from django.contrib.auth.management import create_permissions

    for label in ("knowledge", "learning", "core", "transcripts", "crewlet"):
        create_permissions(apps.get_app_config(label), verbosity=0)


def lead_permissions() -> list[Permission]:
    wanted = [(label, codename) for label, codenames in LEAD_GRANTS.items() for codename in codenames]
    for label in VIEW_ALL_OF:
        for model in apps.get_app_config(label).get_models():
            wanted.append((label, f"view_{model._meta.model_name}"))
    perms = []
    for label, codename in wanted:
        perm = Permission.objects.filter(content_type__app_label=label, codename=codename).first()
        if perm is None:
            raise LookupError(f"permission {label}.{codename} does not exist; run migrate first")
        perms.append(perm)
    return perms


def ensure_leads_group() -> Group:
    """Create or repair the group so it holds exactly the lead permissions (idempotent)."""
    _ensure_permissions()
    ContentType.objects.clear_cache()
    group, _created = Group.objects.get_or_create(name=LEADS_GROUP)
    group.permissions.set(lead_permissions())
    return group


def create_lead(*, username: str, password: str | None = None, email: str = ""):
    """A staff user in the leads group; an existing user is promoted, and its password reset if given.

    A password the project's validators refuse (``AUTH_PASSWORD_VALIDATORS``) raises ``ValidationError``
    and changes nothing."""
    User = get_user_model()
    with transaction.atomic():
        group = ensure_leads_group()
        user, created = User.objects.get_or_create(username=username, defaults={"email": email})
        user.is_staff = True
        user.is_active = True
        if password is not None:
            password_validation.validate_password(password, user)
            user.set_password(password)
        elif created:
            user.set_unusable_password()
        user.save()
        user.groups.add(group)
    return user
