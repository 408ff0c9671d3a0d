"""A person's action in the admin's "Recent actions": one Django ``LogEntry`` per change.

Called inside the transaction that writes the change and its audit event, so the three land
together or not at all. Only people are logged here; an agent acting on its own skill is audited
by its event alone (the admin's history is the people's).
"""

from __future__ import annotations

from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db import models

FLAGS = {"added": ADDITION, "changed": CHANGE, "deleted": DELETION}


def log_action(user, obj: models.Model, message: str, *, flag: str = "changed", object_repr: str = "") -> LogEntry:
    """Record ``user``'s action on ``obj`` (for a deletion, call before the row is gone)."""
    return LogEntry.objects.create(
        user_id=user.pk,
        content_type=ContentType.objects.get_for_model(obj, for_concrete_model=False),
        object_id=str(obj.pk),
        object_repr=(object_repr or str(obj))[:200],
        action_flag=FLAGS[flag],
        change_message=message,
    )
