"""The secret key of an installation that sets no ``DJANGO_SECRET_KEY``: random, made once per var/ folder.

Every process reading the same folder (the web server, the queue's workers, management commands)
reads the same key, so sessions, CSRF tokens and the queue's signed tasks agree between them. The
file is readable by its owner only; the first process to create it wins, the others read it.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

FILE_NAME = "secret_key"


def for_folder(folder: Path) -> str:
    path = Path(folder) / FILE_NAME
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    fd, temporary = tempfile.mkstemp(prefix=".secret_key-", dir=folder)  # created with mode 0600
    try:
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(secrets.token_urlsafe(50))
        try:
            os.link(temporary, path)  # fails if another process made the file first: its key is kept
        except FileExistsError:
            pass
    finally:
        os.unlink(temporary)
    return _read(path)


def _read(path: Path) -> str:
    key = path.read_text(encoding="ascii").strip()
    if not key:
        raise ImproperlyConfigured(f"{path} is empty: delete it to have a new key made, or set DJANGO_SECRET_KEY")
    return key
