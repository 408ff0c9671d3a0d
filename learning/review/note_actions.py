"""A lead's corrections to a seat's diary: forget a note, or correct its text.

Each takes the acting person (``*, actor``), needs the diary permission, and writes the change and
its audit event (``note_forgotten`` / ``note_corrected``, naming the lead) in one transaction. A
forgotten note is deleted, so no recall, recency read or prefetch can show it afterwards; a corrected
note is re-embedded so recall ranks the text it now holds.
"""

from __future__ import annotations

from django.db import transaction

from core import admin_log, events
from core.providers.embeddings import embed_one
from core.providers.embeddings.base import DIARY_EMBED_BUDGET
from crewlet.errors import BadInput, Forbidden
from learning import limits
from learning.events import NoteCorrected, NoteForgotten
from learning.models import DiaryEntry

FORGET_PERMISSION = "learning.delete_diaryentry"
CORRECT_PERMISSION = "learning.change_diaryentry"


def _lead(actor, permission: str) -> str:
    if not (actor and actor.is_active and actor.has_perm(permission)):
        raise Forbidden(f"{getattr(actor, 'username', 'anonymous')} lacks the {permission} permission")
    return actor.get_username()


def can_forget(user) -> bool:
    return bool(user and user.is_active and user.has_perm(FORGET_PERMISSION))


def can_correct(user) -> bool:
    return bool(user and user.is_active and user.has_perm(CORRECT_PERMISSION))


def forget(*, note: DiaryEntry, actor, reason: str = "") -> None:
    username = _lead(actor, FORGET_PERMISSION)
    with transaction.atomic():
        event = NoteForgotten(user=username, note_id=note.pk, kind=note.kind, content=note.content,
                              turn_id=note.turn_id, reason=reason)
        seat = note.seat
        admin_log.log_action(actor, note, f"Forgot the note of {seat.handle}" + (f": {reason}" if reason else ""),
                             flag="deleted")
        note.delete()
        events.publish(event, seat=seat, turn_id=event.turn_id)


def correct(*, note: DiaryEntry, content: str, actor, reason: str = "") -> DiaryEntry:
    username = _lead(actor, CORRECT_PERMISSION)
    content = (content or "").strip()
    if not content:
        raise BadInput("content: a corrected note needs text (forget the note to remove it)")
    limits.check_note(content)
    if content == note.content:
        raise BadInput("content: the correction is the same text as the note")
    vector = embed_one(content, budget=DIARY_EMBED_BUDGET)  # outside the transaction: it may take a moment
    with transaction.atomic():
        before = note.content
        note.content = content
        note.set_vector(vector.vector, vector.model)
        note.save()
        admin_log.log_action(actor, note, "Corrected the note" + (f": {reason}" if reason else ""))
        events.publish(NoteCorrected(user=username, note_id=note.pk, before=before, after=content, reason=reason),
                       seat=note.seat, turn_id=note.turn_id)
    return note
