"""Editing crewlet.toml from the admin: validate, apply, write the file atomically, log -- all or nothing.

A refused edit writes nothing and applies nothing: it lists every refused key path and says which
revision keeps serving. The editor changes the learning knobs, never where data is sent or which
secrets are read (``crewlet.config.trust``). An accepted edit is applied to the org tables in a
transaction that also replaces the file in one step (a temporary file beside it, then
``os.replace``) and logs it in the admin's Recent actions. The admin only wires this to a form.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from django.db import DataError, IntegrityError

from core import admin_log
from crewlet.config import runtime, trust
from crewlet.config.parse import ConfigError, Problem
from crewlet.errors import Forbidden

EDIT_PERMISSION = "crewlet.add_configrevision"


class EditRefused(Exception):
    """Nothing was written: ``problems`` lists every refused key path; ``serving`` is the revision kept."""

    def __init__(self, problems: list[Problem], serving: str):
        self.problems, self.serving = problems, serving
        super().__init__("\n".join(map(str, problems)))


def can_edit(user) -> bool:
    return bool(user and user.is_active and user.has_perm(EDIT_PERMISSION))


def serving_revision() -> str:
    """The short id of the revision in force (what keeps serving after a refusal)."""
    return runtime.revision()[:12] or "none (the defaults)"


def editor_text() -> str:
    """What the editor opens with: the file, or failing that the latest applied revision."""
    from crewlet.models import ConfigRevision

    try:
        return Path(runtime.config_path()).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        latest = ConfigRevision.objects.first()
        return latest.content if latest else ""


def save(text: str, *, user):
    """Validate ``text``, apply it, write it over the config file, all or nothing; returns its ``ConfigRevision``."""
    if not can_edit(user):
        raise Forbidden(f"{getattr(user, 'username', 'anonymous')} lacks the {EDIT_PERMISSION} permission")
    text = text.replace("\r\n", "\n")  # a browser's textarea sends CRLF
    try:
        config = runtime.validate(text)
    except ConfigError as exc:
        raise EditRefused(exc.problems, serving_revision()) from None
    problems = trust.editor_changes(runtime.current(), config)
    if problems:
        raise EditRefused(problems, serving_revision())
    path = runtime.config_path()

    def write_and_log(revision):  # inside the apply's transaction: a file that cannot be written undoes it
        write_atomically(path, text)
        admin_log.log_action(user, revision, f"Edited and applied {path}", flag="added")

    try:
        return runtime.apply_text(text, path=path, config=config, actor=user, via="admin editor",
                                  before_commit=write_and_log)
    except OSError as exc:
        raise EditRefused([Problem("", f"cannot write {path} ({exc.strerror or exc})")], serving_revision()) from None
    except (DataError, IntegrityError) as exc:
        raise EditRefused([Problem("", f"the database refused it ({exc})")], serving_revision()) from None


def write_atomically(path: str, text: str) -> None:
    """Replace ``path`` in one step: readers see the old file or the new one, never a half-written one."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, temporary = tempfile.mkstemp(prefix=".crewlet-", suffix=".toml", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if os.path.exists(path):
            os.chmod(temporary, os.stat(path).st_mode & 0o777)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
