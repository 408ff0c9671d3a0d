"""The config a process is serving: re-read when the file's content changes, kept on a bad edit.

``current()`` is cheap (one ``stat``); a changed file is validated (``crewlet.config.trust`` included),
applied to the org tables and recorded as a ``ConfigRevision`` naming who applied it -- one row per
change, however many processes read the file. An invalid file is refused with the key path and the
reason: the revision already serving keeps serving, and a process that has none refuses to serve
(``ConfigUnusable``), never falling back to the defaults. Tests install a config directly with ``use()``.
"""

from __future__ import annotations

import dataclasses
import getpass
import hashlib
import logging
import os
import sys
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError, DataError, IntegrityError

from crewlet.config import schema, trust
from crewlet.config.parse import ConfigError, build, merge, parse_text

if TYPE_CHECKING:
    from crewlet.models import ConfigRevision, Seat

log = logging.getLogger("crewlet.config")

# one apply at a time across every process of the installation (a PostgreSQL advisory lock's key)
APPLY_LOCK_KEY = 0x63726577  # "crew"


class ConfigUnusable(ImproperlyConfigured):
    """The config file is invalid and this process has no earlier revision to serve."""


@dataclass
class _State:
    config: schema.Config | None = None  # None: nothing taken yet (the file is read on first use)
    sha256: str = ""
    path: str = ""
    mtime_ns: int = -1
    size: int = -1
    last_error: str = ""
    pinned: bool = False  # set by use(): the file is not consulted


_lock = threading.Lock()
_state = _State()
_listeners: list = []


def config_path() -> str:
    from django.conf import settings

    return settings.CREWLET_CONFIG_PATH


def current() -> schema.Config:
    """The config in force, re-reading the file first if its content changed.

    Raises ``ConfigUnusable`` when the file is invalid and no revision was taken before it; without a
    file at all, the defaults serve."""
    if not _state.pinned:
        _maybe_reload()
    if _state.config is None:
        if _state.last_error:
            raise ConfigUnusable(f"config {_state.path} is invalid and no earlier revision serves in this process; "
                                 f"fix the file and start again:\n{_state.last_error}")
        _state.config = schema.Config()  # no file: the defaults
    return _state.config


def revision() -> str:
    current()
    return _state.sha256


def last_error() -> str:
    return _state.last_error


def on_apply(callback) -> None:
    """Register ``callback(old, new)`` to run after a new revision is taken (e.g. to reschedule loops)."""
    _listeners.append(callback)


def use(config: schema.Config | None) -> None:
    """Serve ``config`` regardless of the file (tests, the demo); ``None`` returns to the file."""
    with _lock:
        old = _state.config
        if config is None:
            _state.pinned, _state.mtime_ns, _state.sha256, _state.last_error = False, -1, "", ""
            _state.config = None
        else:
            _state.pinned = True
            _state.config = config
            _state.sha256 = hashlib.sha256(repr(config).encode()).hexdigest()
        new = _state.config
    _knobs_cache.clear()
    _notify(old, new)


def file_problem() -> str:
    """Why the config file cannot be served ("" when it can, or when there is none); reads no database.

    Processes check it before they serve (``crewlet.config.checks``, ``crewlet.wsgi``)."""
    path = config_path()
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return ""
    except OSError as exc:
        return f"config {path}: cannot read ({exc.strerror or exc})"
    try:
        validate(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return f"config {path}: not UTF-8 text (byte {exc.start})"
    except ConfigError as exc:
        return f"config {path} is invalid:\n{exc}"
    return ""


def validate(text: str) -> schema.Config:
    """The config ``text`` states, refused with every problem: the schema's and the deploy-time allowlist's."""
    config = parse_text(text)
    problems = trust.outside_allowlist(config)
    if problems:
        raise ConfigError.of(problems)
    return config


def who() -> str:
    """This process's command and OS user, for a revision no signed-in user applied."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = f"uid {os.getuid()}"
    command = " ".join(os.path.basename(arg) for arg in sys.argv[:2]) or "python"
    return f"{command} (OS user {user})"


def apply_text(text: str, *, path: str = "<text>", actor=None, via: str = "",
               config: schema.Config | None = None, before_commit=None) -> ConfigRevision:
    """Validate ``text``, apply it to the org tables and take it; returns its ``ConfigRevision``.

    A new row is recorded only when ``text`` differs from the latest revision. ``before_commit(revision)``
    runs inside the transaction after the tables are written (the editor writes the file there: a
    file that cannot be written rolls the apply back). Raises ``ConfigError`` and keeps the old one."""
    from django.db import connection, transaction

    from crewlet.config.apply import apply_to_org
    from crewlet.models import ConfigRevision

    config = config if config is not None else validate(text)
    sha = hashlib.sha256(text.encode()).hexdigest()
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [APPLY_LOCK_KEY])
        summary = apply_to_org(config)
        latest = ConfigRevision.objects.first()
        if latest is None or latest.sha256 != sha:
            latest = ConfigRevision.objects.create(sha256=sha, path=path, content=text, summary=summary,
                                                   applied_by=actor, applied_via=via or who())
        if before_commit is not None:
            before_commit(latest)
    with _lock:
        old = _state.config
        _state.config, _state.sha256, _state.path, _state.last_error = config, sha, path, ""
    _knobs_cache.clear()
    _notify(old, config)
    return latest


_reload_lock = threading.Lock()  # one reload at a time per process (threaded servers)


def _maybe_reload() -> None:
    path = config_path()
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    if st.st_mtime_ns == _state.mtime_ns and st.st_size == _state.size and path == _state.path:
        return
    with _reload_lock:
        if st.st_mtime_ns == _state.mtime_ns and st.st_size == _state.size and path == _state.path:
            return  # another thread reloaded it while this one waited
        with open(path, "rb") as fh:
            raw = fh.read()
        # recorded before anything can be refused: a bad file is reported once, not re-read per request
        _state.mtime_ns, _state.size = st.st_mtime_ns, st.st_size
        sha = hashlib.sha256(raw).hexdigest()
        if sha == _state.sha256 and _state.config is not None:
            _state.path = path
            return
        try:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ConfigError("", f"not UTF-8 text (byte {exc.start}: {raw[exc.start:exc.start + 1]!r})") from None
            try:
                apply_text(text, path=path, via=f"file read by {who()}")
            except (DataError, IntegrityError) as exc:  # the content, not the connection: refused like a bad key
                raise ConfigError("", f"the database refused it ({exc})") from None
            log.info("config %s applied (revision %s)", path, sha[:12])
        except DatabaseError:
            _state.mtime_ns = -1  # the database failed, not the file: the next call reads it again
            raise
        except ConfigError as exc:
            _state.last_error = str(exc)
            _state.path = path
            if _state.config is None:
                log.error("config %s refused, and this process has no earlier revision to serve: %s", path, exc)
            else:
                log.error("config %s refused, revision %s keeps serving: %s", path, _state.sha256[:12] or "-", exc)


def _notify(old, new):
    if new is None:  # use(None): nothing is taken until the file is read
        return
    old = old if old is not None else schema.Config()  # the first revision a process takes follows the defaults
    for callback in list(_listeners):
        try:
            callback(old, new)
        except Exception:  # a listener never blocks an apply
            log.exception("config listener failed")


@dataclass(frozen=True)
class Knobs:
    """The knobs in force for one role: [learning] and [skills] with the role's overrides merged."""

    learning: schema.Learning
    skills: schema.Skills


_knobs_cache: dict[str, Knobs] = {}


def knobs(role_name: str | None = None) -> Knobs:
    config = current()
    key = role_name or ""
    cached = _knobs_cache.get(key)
    if cached is not None:
        return cached
    role = config.roles.get(role_name or "")
    if role is None:
        result = Knobs(learning=config.learning, skills=config.skills)
    else:
        result = Knobs(
            learning=build(schema.Learning, merge(dataclasses.asdict(config.learning), role.learning), "learning"),
            skills=build(schema.Skills, merge(dataclasses.asdict(config.skills), role.skills), "skills"),
        )
    _knobs_cache[key] = result
    return result


def knobs_for_seat(seat: Seat) -> Knobs:
    role = seat.role
    return knobs(role.name if role is not None else None)
